# Benchmarks of the snapshot format and the build job (programs that print figures).
if(TARGET graphsieve_snapshot)
  add_executable(graphsieve-bench-lookup ${CMAKE_CURRENT_SOURCE_DIR}/builder_lookup_bench.cc)
  target_link_libraries(graphsieve-bench-lookup PRIVATE graphsieve_snapshot
    absl::flags absl::flags_parse absl::flags_usage absl::strings absl::time absl::flat_hash_map)
endif()
if(TARGET graphsieve_offline)
  add_executable(graphsieve-bench-build ${CMAKE_CURRENT_SOURCE_DIR}/builder_build_bench.cc)
  target_link_libraries(graphsieve-bench-build PRIVATE graphsieve_offline
    absl::flags absl::flags_parse absl::flags_usage absl::strings absl::str_format)
endif()
if(TARGET graphsieve_snapshot)
  add_executable(graphsieve-bench-write ${CMAKE_CURRENT_SOURCE_DIR}/builder_write_bench.cc)
  target_link_libraries(graphsieve-bench-write PRIVATE graphsieve_snapshot
    absl::flags absl::flags_parse absl::flags_usage absl::strings)
endif()
