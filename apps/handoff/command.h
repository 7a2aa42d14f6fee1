// The tool's command-line front: a command's options bound to the caller's variables, their
// checks, and what the command runs. A thin handle over CLI11 that only command.cpp and main.cpp
// include: CLI11 2.1 is header-only and puts about 120 KB of code (its formatter, config parser
// and validators) into every file that includes it, 5.4 s of -O3 compile each.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace handoff::cli {

/// One option of a Command; each call adds a check and returns the option for the next.
class Option {
 public:
  explicit Option(CLI::Option* option) : option_(option) {}
  Option& required();                                      ///< The command fails without it.
  Option& existingFile();                                  ///< The value names a file that exists.
  Option& existingDirectory();                             ///< The value names a folder that exists.
  Option& positive();                                      ///< The value is a number > 0.
  Option& range(int lowest, int highest);                  ///< lowest <= value <= highest.
  Option& range(double lowest, double highest);            ///< The same for real numbers.
  Option& oneOf(const std::vector<std::string>& allowed);  ///< The value is one of these.
  Option& excludes(const std::string& otherOption);        ///< Not together with that one.
  /// The option may be given without a value; it then takes `value` (shown in the help).
  Option& valueOptional(const std::string& value);

 private:
  CLI::Option* option_;
};

/// The tool or one of its subcommands: a handle, copied freely, valid while the tool's
/// CLI::App (main.cpp) lives.
class Command {
 public:
  explicit Command(CLI::App* app) : app_(app) {}
  Command subcommand(const std::string& name, const std::string& description);
  /// A positional argument ("file") or an option ("-o,--out") stored into `value` when given.
  /// T: std::string, int, double, std::uint64_t or std::vector<std::string>.
  template <class T>
  Option option(const std::string& names, T& value, const std::string& description);
  Option flag(const std::string& names, bool& value, const std::string& description);
  /// Runs after a successful parse of this command's arguments.
  void callback(std::function<void()> run);
  void requireSubcommand(int count);
  /// How many times the option was given.
  std::size_t count(const std::string& name) const;

 private:
  CLI::App* app_;
};

}  // namespace handoff::cli
