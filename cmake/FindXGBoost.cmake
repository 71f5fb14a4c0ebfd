# FindXGBoost: XGBoost's C API (Debian's libxgboost-dev: /usr/include/xgboost/c_api.h
# and libxgboost.so), which ships no CMake package of its own there.
# Defines XGBoost_FOUND and the imported target XGBoost::xgboost.
find_path(XGBoost_INCLUDE_DIR xgboost/c_api.h)
find_library(XGBoost_LIBRARY NAMES xgboost)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(XGBoost REQUIRED_VARS XGBoost_LIBRARY XGBoost_INCLUDE_DIR)
if(XGBoost_FOUND AND NOT TARGET XGBoost::xgboost)
  add_library(XGBoost::xgboost UNKNOWN IMPORTED)
  set_target_properties(XGBoost::xgboost PROPERTIES
    IMPORTED_LOCATION "${XGBoost_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${XGBoost_INCLUDE_DIR}")
endif()
mark_as_advanced(XGBoost_INCLUDE_DIR XGBoost_LIBRARY)
