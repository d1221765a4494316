#include "cli.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <htrace/version.h>

namespace htrace::cli {
namespace {

Outcome outcome(const CLI::App& app, Outcome::Action action, std::string text) {
  Outcome o;
  o.action = action;
  o.tool = app.get_name();
  o.text = std::move(text);
  return o;
}

// "-5" is a value, not an option: only a dash followed by a non-digit starts an option.
bool looks_like_option(const std::string& arg) {
  return arg.size() > 1 && arg[0] == '-' && !(std::isdigit(static_cast<unsigned char>(arg[1])));
}

// CLI11 leaves what it does not know (allow_extras); naming it ourselves keeps one wording.
std::string unexpected(const std::string& arg) {
  return looks_like_option(arg) ? "unknown option '" + arg + "'"
                                : "unexpected argument '" + arg + "'";
}

// CLI11 says "--csv: 1 required TEXT missing"; the tools have always said it plainly.
std::string plain_message(const CLI::ParseError& e) {
  const std::string what = e.what();
  const std::size_t colon = what.find(": ");
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr && colon != std::string::npos &&
      what.find(" required ", colon) != std::string::npos &&
      what.compare(what.size() - 8, 8, " missing") == 0)
    return "option '" + what.substr(0, colon) + "' needs a value";
  return what;
}

constexpr std::size_t kHelpWidth = 100; // the repository's line length

// Breaks `text` into lines of at most `width` characters at spaces (a longer word stays whole).
std::string wrap(const std::string& text, std::size_t width) {
  std::string out, line;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  return out + line;
}

// CLI11 2.1 prints a description on one line however long; the help stays within 100 columns.
class WrappingFormatter : public CLI::Formatter {
public:
  std::string make_option_desc(const CLI::Option* opt) const override {
    const std::size_t column = get_column_width();
    return wrap(CLI::Formatter::make_option_desc(opt),
                kHelpWidth > column + 20 ? kHelpWidth - column : 20);
  }
};

} // namespace

void configure(CLI::App& app) {
  app.set_help_flag("-h,--help", "print this help and exit");
  app.set_version_flag("--version", app.get_name() + " " + HTRACE_VERSION_STRING,
                       "print the version and exit");
  app.allow_extras();
  auto formatter = std::make_shared<WrappingFormatter>();
  formatter->column_width(32);
  app.formatter(formatter);
}

Outcome parse(CLI::App& app, int argc, const char* const* argv, const Check& check) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return outcome(app, Outcome::Action::Help, app.help());
  } catch (const CLI::CallForAllHelp&) {
    return outcome(app, Outcome::Action::Help, app.help("", CLI::AppFormatMode::All));
  } catch (const CLI::CallForVersion& e) {
    return outcome(app, Outcome::Action::Version, e.what());
  } catch (const CLI::ParseError& e) {
    return outcome(app, Outcome::Action::UsageError, plain_message(e));
  }
  const std::vector<std::string> extra = app.remaining(true);
  if (!extra.empty()) return outcome(app, Outcome::Action::UsageError, unexpected(extra.front()));
  if (check) {
    std::string error = check();
    if (!error.empty()) return outcome(app, Outcome::Action::UsageError, std::move(error));
  }
  return outcome(app, Outcome::Action::Run, "");
}

int report(const Outcome& o, bool speak) {
  if (speak) {
    switch (o.action) {
    case Outcome::Action::Run:
      break;
    case Outcome::Action::Help:
      std::fputs(o.text.c_str(), stdout);
      break;
    case Outcome::Action::Version:
      std::printf("%s\n", o.text.c_str());
      break;
    case Outcome::Action::UsageError:
      std::fprintf(stderr, "%s: error: %s\nRun '%s --help' for the usage.\n", o.tool.c_str(),
                   o.text.c_str(), o.tool.c_str());
      break;
    }
    std::fflush(stdout);
  }
  return o.exit_code();
}

CLI::Validator number(const std::string& form, std::function<bool(double)> accept) {
  return CLI::Validator(
      [form, accept](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || errno != 0 || !accept(v))
          return "'" + text + "' is not " + form;
        return "";
      },
      "", "");
}

CLI::Validator integer(long lo, long hi) {
  const std::string form = hi == LONG_MAX
                               ? "an integer >= " + std::to_string(lo)
                               : "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
  return CLI::Validator(
      [form, lo, hi](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long v = std::strtol(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0' || errno != 0 || v < lo || v > hi)
          return "'" + text + "' is not " + form;
        return "";
      },
      "", "");
}

} // namespace htrace::cli
