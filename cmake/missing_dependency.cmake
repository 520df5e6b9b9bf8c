# graphsieve_missing_dependency(<what is missing> <what is not built> <how to install>)
# An optional dependency was not found. Outside CI the part is left out with a
# warning. Under CI=true (the environment variable every CI runner sets) it is a
# configure error: a CI machine whose install step broke must not pass a suite
# that silently lost a test group (docs/RELIABILITY.md, "No silent skips").
function(graphsieve_missing_dependency missing lost install)
  if("$ENV{CI}" STREQUAL "true")
    message(FATAL_ERROR "CI=true: ${missing} not found, so ${lost} would not be built; "
                        "${install}")
  endif()
  message(WARNING "${missing} not found: ${lost} not built; ${install}")
endfunction()
