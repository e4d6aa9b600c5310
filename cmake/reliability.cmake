# Build modes that look for bugs hostile dumps could trigger (issue 15; tests/fuzz/README.md):
#   P2PCHECK_SANITIZE  AddressSanitizer + UndefinedBehaviorSanitizer + libstdc++ assertions: the
#                      asan_suite ctest runs the quick suite in such a build.
#   P2PCHECK_FUZZ      the libFuzzer targets of tests/fuzz (clang only; implies P2PCHECK_SANITIZE).
#   P2PCHECK_WERROR    warnings are errors (clang_tree fails on warnings without it, so its flags
#                      stay those of the fuzz build and ccache serves both).
option(P2PCHECK_SANITIZE "build with ASan, UBSan and -D_GLIBCXX_ASSERTIONS" OFF)
option(P2PCHECK_FUZZ "build the libFuzzer targets in tests/fuzz (clang; implies P2PCHECK_SANITIZE)" OFF)
option(P2PCHECK_WERROR "treat compiler warnings as errors" OFF)

if(P2PCHECK_WERROR)
  add_compile_options(-Werror)
endif()
if(P2PCHECK_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "P2PCHECK_FUZZ needs clang (libFuzzer): -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang")
  endif()
  set(P2PCHECK_SANITIZE ON)
  # Coverage feedback for every library file; the fuzz targets link libFuzzer's main themselves.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
if(P2PCHECK_SANITIZE)
  # Any undefined behaviour stops the run (a test or fuzz finding), instead of a line on stderr;
  # _GLIBCXX_ASSERTIONS bounds-checks operator[], front(), back() and friends.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
                      -D_GLIBCXX_ASSERTIONS)
  add_link_options(-fsanitize=address,undefined)
endif()
