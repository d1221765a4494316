// Transparent huge pages for a tool's heap. A tool that reads thousands of locations touches
// fresh memory in every one of them, and each 4 KiB page costs a page fault: about 20 us in a
// virtual machine here (108 MiB faulted in 0.47-0.55 s, against 0.01-0.19 s with huge pages).
// Where the kernel gives huge pages only to memory that asks for them (transparent_hugepage
// "madvise", a common default), glibc's malloc asks only when told so at start-up
// (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, glibc 2.35 and later).
#pragma once

#include <optional>
#include <string>

namespace htrace::tools {

/// Called first in main(): where huge_page_tunables() says so, restarts the program (the same
/// executable and `argv`) with that GLIBC_TUNABLES; returns if the restart fails, and under
/// valgrind.
void use_huge_page_heap(char** argv);

/// The decision: the GLIBC_TUNABLES to restart with, given its value now (null: unset), the line
/// of /sys/kernel/mm/transparent_hugepage/enabled and glibc's version; nullopt where nothing is to
/// be done: the kernel's mode is not "madvise", glibc is older than 2.35, or the value names
/// glibc.malloc.hugetlb already (the user's choice, or this restart's).
std::optional<std::string> huge_page_tunables(const char* tunables, const std::string& thp_mode,
                                              const char* glibc_version);

} // namespace htrace::tools
