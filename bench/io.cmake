# graphsieve-bench-io: log reader MB/s (plain, gzip) against raw read()+memchr
# and zlib-inflate baselines in the same run, and the generator's seconds.
add_executable(graphsieve-bench-io ${CMAKE_CURRENT_LIST_DIR}/io_bench.cc)
target_link_libraries(graphsieve-bench-io PRIVATE graphsieve_cli graphsieve_io graphsieve_gen absl::flags absl::flags_parse
                      absl::flags_usage absl::strings absl::str_format ZLIB::ZLIB)
