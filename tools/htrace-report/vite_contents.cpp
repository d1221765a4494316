#include "vite_contents.h"

#include <array>

namespace htrace::report {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

} // namespace

bool vite_carries_definition(std::string_view kind) {
  static constexpr std::array<std::string_view, 20> kCarried = {"ClockProperties",
                                                                "String",
                                                                "Attribute",
                                                                "Paradigm",
                                                                "ParadigmProperty",
                                                                "SystemTreeNode",
                                                                "SystemTreeNodeProperty",
                                                                "SystemTreeNodeDomain",
                                                                "LocationGroup",
                                                                "LocationGroupProperty",
                                                                "Location",
                                                                "LocationProperty",
                                                                "Region",
                                                                "Parameter",
                                                                "Group",
                                                                "Comm",
                                                                "InterComm",
                                                                "MetricMember",
                                                                "MetricClass",
                                                                "MetricClassRecorder"};
  for (std::string_view carried : kCarried)
    if (kind == carried) return true;
  return false;
}

bool vite_carries_event(std::string_view kind) {
  // ViTE 1.2 warns "callback_<kind> not implemented" once per record of these.
  static constexpr std::array<std::string_view, 6> kNoHandler = {
      "BufferFlush",     "ThreadFork",   "ThreadJoin",
      "ParameterString", "ParameterInt", "ParameterUnsignedInt"};
  for (std::string_view left_out : kNoHandler)
    if (kind == left_out) return false;
  // Records of RMA windows, I/O handles and calling contexts, definitions the copy leaves out.
  return !starts_with(kind, "Rma") && !starts_with(kind, "Io") &&
         !starts_with(kind, "CallingContext");
}

} // namespace htrace::report
