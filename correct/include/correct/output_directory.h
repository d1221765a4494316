// The output archive's directory: written under a temporary name next to OUT, made durable and
// renamed into place only when complete, removed on any failure or interrupt.
#ifndef HTRACE_CORRECT_OUTPUT_DIRECTORY_H
#define HTRACE_CORRECT_OUTPUT_DIRECTORY_H

#include "correct/options.h"
#include "correct/rank_group.h"

#include <string>

namespace htrace::correct {

// The temporary archive directory next to OUT (`.OUT.htrace-correct-PID`). Destroyed before it
// was committed (any failure), rank 0 removes it once every rank is done with it: no partial
// output is left behind.
class TempOutput {
public:
  TempOutput() = default;
  // Until it is committed or removed, an interrupt (SIGINT, SIGTERM, SIGHUP) removes `dir`.
  // `ranks` must outlive it.
  TempOutput(std::string dir, RankGroup& ranks);
  TempOutput(TempOutput&& o) noexcept { *this = std::move(o); }
  TempOutput& operator=(TempOutput&& o) noexcept;
  ~TempOutput();
  const std::string& dir() const { return dir_; }
  const std::string& name() const { return name_; }
  // Collective: makes the archive's `files` files durable (fsync, or one syncfs of the file system
  // for many files per rank), then renames the finished archive to OUT. An
  // existing OUT (--force) is exchanged with it atomically where the file system can, else moved
  // aside first and put back if the rename fails; the old archive is removed only once the new one
  // is in place.
  void commit(const Options& o, std::size_t files);

private:
  void remove();
  std::string sync(std::size_t files);
  std::string dir_;
  std::string name_ = "traces";
  RankGroup* ranks_ = nullptr;
  int file_system_ = -1; ///< the output's parent directory, for syncfs
};
TempOutput prepare_output(const Options& o, RankGroup& ranks);

} // namespace htrace::correct
#endif
