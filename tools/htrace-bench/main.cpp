// htrace-bench: collective-latency benchmark on the global clock (see README.md).
#include "bench_config.h"
#include "bench_run.h"
#include "report.h"

#include <cstdio>
#include <mpi.h>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "compare")
    return htrace::bench::run_compare({args.begin() + 1, args.end()});
  const htrace::bench::ParseResult parsed = htrace::bench::parse_command_line(args);
  if (parsed.help) {
    std::fputs(htrace::bench::kUsage, stdout);
    return 0;
  }
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "htrace-bench: error: %s\n%s", parsed.error.c_str(),
                 htrace::bench::kUsage);
    return 2;
  }
  MPI_Init(&argc, &argv);
  const int status = htrace::bench::run_benchmark(parsed.config);
  MPI_Finalize();
  return status;
}
