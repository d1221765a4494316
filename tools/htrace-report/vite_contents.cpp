#include "vite_contents.h"

namespace htrace::report {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

} // namespace

bool vite_carries_definition(std::string_view kind) {
  // What ViTE 1.2 reads.
  static constexpr std::string_view kRead[] = {
      "ClockProperties", "String", "SystemTreeNode", "LocationGroup", "Location",
      "Region",          "Group",  "Comm",           "MetricMember",  "MetricClass"};
  // What OTF2 readers need beside them (attribute lists name attributes), and ViTE skips.
  static constexpr std::string_view kBeside[] = {"Attribute",
                                                 "Paradigm",
                                                 "ParadigmProperty",
                                                 "SystemTreeNodeProperty",
                                                 "SystemTreeNodeDomain",
                                                 "LocationGroupProperty",
                                                 "LocationProperty",
                                                 "Parameter",
                                                 "InterComm"};
  for (std::string_view carried : kRead)
    if (kind == carried) return true;
  for (std::string_view carried : kBeside)
    if (kind == carried) return true;
  return false;
}

bool vite_carries_event(std::string_view kind) {
  // ViTE 1.2 warns "callback_<kind> not implemented" once per record of these.
  static constexpr std::string_view kNoHandler[] = {
      "BufferFlush",     "ThreadFork",   "ThreadJoin",          "ThreadCreate",
      "ParameterString", "ParameterInt", "ParameterUnsignedInt"};
  for (std::string_view left_out : kNoHandler)
    if (kind == left_out) return false;
  // Records of RMA windows, I/O handles and calling contexts, definitions the copy leaves out.
  return !starts_with(kind, "Rma") && !starts_with(kind, "Io") &&
         !starts_with(kind, "CallingContext");
}

} // namespace htrace::report
