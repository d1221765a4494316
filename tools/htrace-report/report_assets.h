// The HTML page template and Apache ECharts (third_party/echarts), compiled into the tool by
// embed_assets.cmake so that htrace-report needs no data files at run time.
#pragma once

#include <string>

namespace htrace::report::assets {

std::string report_template();
std::string echarts_js();

} // namespace htrace::report::assets
