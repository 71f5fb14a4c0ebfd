// ir_print_tool: prints print_math() of one named fusion, for the FileCheck
// tests (print_<name>.check). Usage: ir_print_tool <softmax|transpose|keepdim|layernorm>
#include <iostream>
#include <string>

#include "schedlab/ir/printer.h"
#include "schedlab/ir/verifier.h"
#include "test_fusions.h"

int main(int argc, char** argv) {
  using namespace schedlab::ir::testing;
  if (argc != 2) {
    std::cerr << "usage: ir_print_tool <softmax|transpose|keepdim|layernorm>\n";
    return 2;
  }
  std::string name = argv[1];
  std::unique_ptr<schedlab::ir::Fusion> f;
  if (name == "softmax")
    f = make_softmax();
  else if (name == "transpose")
    f = make_transpose();
  else if (name == "keepdim")
    f = make_keepdim();
  else if (name == "layernorm")
    f = make_layernorm();
  if (!f) {
    std::cerr << "ir_print_tool: unknown fusion '" << name
              << "'; expected one of softmax, transpose, keepdim, layernorm\n";
    return 2;
  }
  schedlab::ir::verify(*f);
  std::cout << schedlab::ir::print_math(*f);
  return 0;
}
