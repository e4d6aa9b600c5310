# Every test runs in a UTF-8 locale whatever the caller's: the goldens are UTF-8, and LANG=C asks
# p2pcheck for ASCII (src/cli/text_locale.h); tests/e2e/cli_test.sh checks that fallback itself. An
# exported COLUMNS would narrow the pair matrix of the goldens: it is unset too.
# CMake 3.25 sets test properties only in the directory that added the tests, so each test
# directory calls this at its end.
#
# The tests call python3 hundreds of times: where `python3` is a version manager's shim (pyenv's
# is a bash script, 0.4 s a call), the interpreter it runs (when not the system's) is put first on PATH, so each call is
# the interpreter's own start-up. The same interpreter either way.
execute_process(COMMAND python3 -c "import os, sys
where = os.path.dirname(os.path.realpath(sys.executable))
if where not in ('/usr/bin', '/bin'): print(where)"
                OUTPUT_VARIABLE P2PCHECK_PYTHON_DIR OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
macro(p2pcheck_tests_run_in_utf8)
  get_property(_p2pcheck_dir_tests DIRECTORY PROPERTY TESTS)
  foreach(_p2pcheck_test IN LISTS _p2pcheck_dir_tests)
    set_property(TEST ${_p2pcheck_test} APPEND PROPERTY ENVIRONMENT LC_ALL=C.UTF-8)
    set_property(TEST ${_p2pcheck_test} APPEND PROPERTY ENVIRONMENT_MODIFICATION COLUMNS=unset:)
    if(P2PCHECK_PYTHON_DIR)
      set_property(TEST ${_p2pcheck_test} APPEND PROPERTY ENVIRONMENT_MODIFICATION
                   PATH=path_list_prepend:${P2PCHECK_PYTHON_DIR})
    endif()
  endforeach()
endmacro()
