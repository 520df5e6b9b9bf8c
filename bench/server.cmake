# graphsieve-bench-server: the server vs raw in-process LookupPairs and scoring (prints figures).
if(TARGET graphsieve-server AND TARGET graphsieve_snapshot)
  add_executable(graphsieve-bench-server ${CMAKE_CURRENT_LIST_DIR}/server_bench.cc
    ${CMAKE_CURRENT_LIST_DIR}/trivial_service.cc)
  target_link_libraries(graphsieve-bench-server PRIVATE graphsieve_snapshot graphsieve_serving
    graphsieve_proto gRPC::grpc++ civetweb::civetweb absl::flags absl::flags_parse absl::flags_usage
    absl::strings absl::synchronization absl::time)
  target_compile_definitions(graphsieve-bench-server PRIVATE
    GRAPHSIEVE_SERVER_BINARY="$<TARGET_FILE:graphsieve-server>")
  add_dependencies(graphsieve-bench-server graphsieve-server)
endif()

# graphsieve-bench-partitions: one server vs N partition servers through the
# routing client, a swap under routed load, and the swap campaign with parts
# polling CURRENT on their own (prints figures).
if(TARGET graphsieve-server AND TARGET graphsieve_client)
  add_executable(graphsieve-bench-partitions ${CMAKE_CURRENT_LIST_DIR}/partition_bench.cc
    ${CMAKE_CURRENT_LIST_DIR}/partition_bench_util.cc ${CMAKE_CURRENT_LIST_DIR}/partition_campaign.cc)
  target_link_libraries(graphsieve-bench-partitions PRIVATE graphsieve_client graphsieve_snapshot
    absl::flags absl::flags_parse absl::flags_usage absl::strings)
  target_compile_definitions(graphsieve-bench-partitions PRIVATE
    GRAPHSIEVE_SERVER_BINARY="$<TARGET_FILE:graphsieve-server>")
  add_dependencies(graphsieve-bench-partitions graphsieve-server)
endif()

# graphsieve-bench-profile: the version profiler's full scan of a delta
# version against its incremental profile from the base's kept state.
if(TARGET graphsieve_server)
  add_executable(graphsieve-bench-profile ${CMAKE_CURRENT_LIST_DIR}/profile_bench.cc)
  target_link_libraries(graphsieve-bench-profile PRIVATE graphsieve_server graphsieve_snapshot
    absl::flags absl::flags_parse absl::flags_usage)
endif()
