// Transparent huge pages for a tool's heap. A tool that reads thousands of locations touches
// fresh memory in every one of them, and each 4 KiB page costs a page fault: about 20 us in a
// virtual machine here (108 MiB faulted in 0.47-0.55 s, against 0.01-0.19 s with huge pages).
// Where the kernel gives huge pages only to memory that asks for them (transparent_hugepage
// "madvise", a common default), glibc's malloc asks only when told so at start-up
// (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, glibc 2.35 and later).
#pragma once

namespace htrace::tools {

/// Called first in main(): where huge pages need asking for and glibc can be told to, restarts
/// the program (the same executable and `argv`) with glibc.malloc.hugetlb=1 added to
/// GLIBC_TUNABLES. Does nothing where GLIBC_TUNABLES names glibc.malloc.hugetlb already (the
/// user's choice, or this restart's), and returns if the restart fails.
void use_huge_page_heap(char** argv);

} // namespace htrace::tools
