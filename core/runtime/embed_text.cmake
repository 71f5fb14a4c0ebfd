# cmake -DIN=file -DOUT=file.cpp -DSYMBOL=name -P embed_text.cmake
# Writes OUT defining `const std::string_view schedlab::embedded::SYMBOL`,
# the text of IN: device code lives in .cuh files and is embedded at build
# time (STYLE.md), not written inside C++ strings.
file(READ "${IN}" text)
string(FIND "${text}" ")SLEMBED\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )SLEMBED\"")
endif()
file(WRITE "${OUT}.tmp"
  "// Generated from ${IN} by embed_text.cmake; do not edit.\n"
  "#include <string_view>\n"
  "namespace schedlab::embedded {\n"
  "extern const std::string_view ${SYMBOL};\n"
  "const std::string_view ${SYMBOL} = R\"SLEMBED(${text})SLEMBED\";\n"
  "}  // namespace schedlab::embedded\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
