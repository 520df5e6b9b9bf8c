# graphsieve-bench-core: the MA-EC pipeline on a kuairec-shaped log, seconds and
# peak RSS per stage, and the R_eff accuracy table of the sketch against exact.
if(TARGET graphsieve_maec AND TARGET graphsieve_io AND TARGET graphsieve_gen)
  add_executable(graphsieve-bench-core ${CMAKE_CURRENT_LIST_DIR}/maec_bench.cc)
  target_link_libraries(graphsieve-bench-core PRIVATE graphsieve_maec graphsieve_io graphsieve_gen
                        absl::flags absl::flags_parse absl::flags_usage absl::strings absl::str_format)
endif()
