# memhier._entry, the compiled entry of memhier.ndimage (python/memhier/_entry.c): a CPython
# extension built where the interpreter's headers are (the package's Python path runs without
# it). In a build tree it lands beside libmemhier.so, where memhier._fast finds it; in the
# wheel, inside the package.
enable_language(C)
if(NOT SKBUILD AND NOT DEFINED Python3_EXECUTABLE)
  find_program(MEMHIER_PYTHON3 python3) # the interpreter on PATH, which the tests and scripts run
  if(MEMHIER_PYTHON3)
    set(Python3_EXECUTABLE "${MEMHIER_PYTHON3}")
  endif()
endif()
find_package(Python3 COMPONENTS Interpreter Development.Module)
if(Python3_Development.Module_FOUND)
  Python3_add_library(memhier_entry MODULE WITH_SOABI ${CMAKE_CURRENT_LIST_DIR}/memhier/_entry.c)
  set_target_properties(memhier_entry PROPERTIES OUTPUT_NAME _entry C_STANDARD 11
                        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
  target_compile_options(memhier_entry PRIVATE -Wall -Wextra -Wno-missing-field-initializers)
  # the library's public header: the descriptors a replay copies (sepfilter's, for a new shape)
  target_include_directories(memhier_entry PRIVATE ${PROJECT_SOURCE_DIR}/include)
  if(SKBUILD)
    install(TARGETS memhier_entry LIBRARY DESTINATION memhier COMPONENT python)
  endif()
  message(STATUS "memhier: the compiled entry for Python ${Python3_VERSION}")
else()
  message(STATUS "memhier: no Python headers, the compiled entry left out")
endif()
