// The command-line front over CLI11 (command.h).
#include "command.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <utility>

namespace handoff::cli {

Option& Option::required() {
  option_->required();
  return *this;
}

Option& Option::existingFile() {
  option_->check(CLI::ExistingFile);
  return *this;
}

Option& Option::existingDirectory() {
  option_->check(CLI::ExistingDirectory);
  return *this;
}

Option& Option::positive() {
  option_->check(CLI::PositiveNumber);
  return *this;
}

Option& Option::range(int lowest, int highest) {
  option_->check(CLI::Range(lowest, highest));
  return *this;
}

Option& Option::range(double lowest, double highest) {
  option_->check(CLI::Range(lowest, highest));
  return *this;
}

Option& Option::oneOf(const std::vector<std::string>& allowed) {
  option_->check(CLI::IsMember(allowed));
  return *this;
}

Option& Option::excludes(const std::string& otherOption) {
  option_->excludes(otherOption);
  return *this;
}

Option& Option::valueOptional(const std::string& value) {
  option_->expected(0, 1)->default_str(value);
  return *this;
}

Command Command::subcommand(const std::string& name, const std::string& description) {
  return Command(app_->add_subcommand(name, description));
}

template <class T>
Option Command::option(const std::string& names, T& value, const std::string& description) {
  return Option(app_->add_option(names, value, description));
}

template Option Command::option(const std::string&, std::string&, const std::string&);
template Option Command::option(const std::string&, int&, const std::string&);
template Option Command::option(const std::string&, double&, const std::string&);
template Option Command::option(const std::string&, std::uint64_t&, const std::string&);
template Option Command::option(const std::string&, std::vector<std::string>&, const std::string&);

Option Command::flag(const std::string& names, bool& value, const std::string& description) {
  return Option(app_->add_flag(names, value, description));
}

void Command::callback(std::function<void()> run) { app_->callback(std::move(run)); }

void Command::requireSubcommand(int count) { app_->require_subcommand(count); }

std::size_t Command::count(const std::string& name) const { return app_->count(name); }

}  // namespace handoff::cli
