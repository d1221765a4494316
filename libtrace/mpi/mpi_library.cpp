#include "mpi/mpi_library.h"

#include "common/log.h"
#include "common/options.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mpi.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace htrace::mpi {
namespace {

bool g_matches = true;

/// Rank 0 before MPI_Init, by the launchers' environment (mpirun, hydra, PMIx, Slurm); true when
/// no launcher says.
bool launched_as_rank_zero() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* value = std::getenv(name)) return std::strcmp(value, "0") == 0;
  return true;
}

/// The file of the library whose PMPI_Init the program calls, and whether it is Open MPI's
/// (it defines ompi_mpi_comm_world). The program's libraries come before libhtrace's own MPI in
/// the lookup order, so a program without MPI finds libhtrace's.
struct MpiProvider {
  std::string file;
  bool open_mpi = false;
};

MpiProvider find_provider() {
  MpiProvider provider;
  Dl_info info{};
  void* init = dlsym(RTLD_DEFAULT, "PMPI_Init");
  if (init == nullptr || dladdr(init, &info) == 0 || info.dli_fname == nullptr) return provider;
  provider.file = info.dli_fname;
  if (void* library = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)) {
    provider.open_mpi = dlsym(library, "ompi_mpi_comm_world") != nullptr;
    dlclose(library);
  }
  return provider;
}

/// LD_PRELOAD without libhtrace (entries are separated by spaces or colons).
std::string preload_without_htrace(const char* preload) {
  std::string kept;
  std::string entry;
  for (const char* c = preload;; ++c) {
    if (*c != '\0' && *c != ' ' && *c != ':') {
      entry += *c;
      continue;
    }
    const std::size_t slash = entry.rfind('/');
    const std::string base = slash == std::string::npos ? entry : entry.substr(slash + 1);
    if (!entry.empty() && base.rfind("libhtrace", 0) != 0)
      kept += (kept.empty() ? "" : ":") + entry;
    entry.clear();
    if (*c == '\0') break;
  }
  return kept;
}

/// Executes the program again, same arguments and environment, libhtrace left out of LD_PRELOAD.
/// Returns only if that fails.
void run_again_untraced() {
  std::FILE* cmdline = std::fopen("/proc/self/cmdline", "rb");
  if (cmdline == nullptr) return;
  std::string text;
  char chunk[4096];
  for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, cmdline)) > 0;)
    text.append(chunk, n);
  std::fclose(cmdline);
  std::vector<char*> argv;
  for (std::size_t at = 0; at < text.size(); at += std::strlen(&text[at]) + 1)
    argv.push_back(&text[at]);
  if (argv.empty()) return;
  argv.push_back(nullptr);
  const char* preload = std::getenv("LD_PRELOAD");
  const std::string kept = preload_without_htrace(preload != nullptr ? preload : "");
  if (kept.empty())
    unsetenv("LD_PRELOAD");
  else
    setenv("LD_PRELOAD", kept.c_str(), 1);
  execv("/proc/self/exe", argv.data());
}

__attribute__((constructor)) void check_program_mpi() {
  const MpiProvider provider = find_provider();
  if (provider.file.empty()) return; // not resolvable: libhtrace's own MPI will serve
#if defined(OPEN_MPI)
  g_matches = provider.open_mpi;
#else
  g_matches = !provider.open_mpi;
#endif
  if (g_matches) return;
  if (launched_as_rank_zero()) {
    // This process never reaches a traced MPI_Init, which names the log file otherwise.
    log::set_file(run_options().options.log_file.c_str());
    log::error("this libhtrace is built for %s, but the program runs on %s (%s); running it "
               "untraced: preload the libhtrace built for that MPI",
               built_for(), provider.open_mpi ? "Open MPI" : "another MPI", provider.file.c_str());
  }
  std::fflush(stderr);
  run_again_untraced();
}

} // namespace

const char* built_for() {
#if defined(OPEN_MPI)
  return "Open MPI";
#else
  return "the MPICH ABI (MPICH, Intel MPI, Cray MPICH, MVAPICH)";
#endif
}

bool program_mpi_matches() {
  return g_matches;
}

std::string program_mpi_library() {
  // Larger than any MPI_MAX_LIBRARY_VERSION_STRING (Open MPI 256, MPICH 8192).
  static char text[16384];
  int length = 0;
  if (PMPI_Get_library_version(text, &length) != MPI_SUCCESS || length <= 0 ||
      length >= static_cast<int>(sizeof text))
    return "unknown";
  // The first line, each run of blanks one space ("MPICH Version:\t4.0.2").
  std::string library;
  for (int i = 0; i < length && text[i] != '\n' && text[i] != '\0'; ++i) {
    const bool blank = text[i] == ' ' || text[i] == '\t';
    if (!blank)
      library += text[i];
    else if (!library.empty() && library.back() != ' ')
      library += ' ';
  }
  while (!library.empty() && library.back() == ' ')
    library.pop_back();
  return library;
}

} // namespace htrace::mpi
