// libFuzzer target for the workbench's request handling (issue 27): the POST requests of
// `handoff live` (apps/handoff/live/requests.h: commands, tune, load, save, export, uploads) on
// one workbench holding the DeepMimic run, as the server calls them after its guard. An input is
// "<route>[?<upload name>]\n<body>". Beyond "no crash, no sanitizer report, no leak":
//  - every answer is 200, 400, 404 or 409, and an error carries a message;
//  - the answer prints as JSON (bytes of names that are not UTF-8 replaced, as the server does);
//  - the workbench keeps serving: its description and latest frame are there after every request.
#include "fuzz_check.h"
#include "live/requests.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace {

constexpr const char* kTarget = "workbench_fuzz";

handoff::live::Requests& requests() {
  static std::unique_ptr<handoff::live::TempFolder> folder;
  static std::unique_ptr<handoff::live::Requests> r;
  if (!r) {
    handoff::Result<handoff::live::TempFolder> t =
        handoff::live::TempFolder::create("handoff-workbench-fuzz-");
    if (!t) handoff_fuzz::failure(kTarget, "no temporary folder", t.error());
    folder = std::make_unique<handoff::live::TempFolder>(std::move(t).value());
    handoff::live::RequestsOptions o;
    o.workbench.dataDir = HANDOFF_DATA_DIR;
    o.workbench.outDir = folder->path() / "out";
    o.workbench.scratchDir = folder->path();
    o.workbench.maxStartSeconds = 5.0;
    o.maxUploadBytes = 1 << 20;
    r = std::make_unique<handoff::live::Requests>(o);
    handoff::live::Workbench& wb = r->workbench();
    if (handoff::Status st = wb.open(wb.scenarioForCharacter("deepmimic/humanoid3d_run.bvh"), "fuzz"); !st)
      handoff_fuzz::failure(kTarget, "the DeepMimic run does not open", st.error());
  }
  return *r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 256 * 1024) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t newline = input.find('\n');
  if (newline == std::string_view::npos) return 0;
  std::string_view route = input.substr(0, newline), name;
  if (const std::size_t q = route.find('?'); q != std::string_view::npos) {
    name = route.substr(q + 1);
    route = route.substr(0, q);
  }
  handoff::live::Requests& r = requests();
  const handoff::live::Reply reply = r.post(route, name, input.substr(newline + 1));
  if (reply.status != 200 && reply.status != 400 && reply.status != 404 && reply.status != 409)
    handoff_fuzz::failure(kTarget, "unexpected status", std::to_string(reply.status));
  if (!reply.body.is_object()) handoff_fuzz::failure(kTarget, "the answer is not an object", "");
  if (reply.status != 200) {
    const auto error = reply.body.find("error");
    if (error == reply.body.end() || !error->is_string() || error->get<std::string>().empty())
      handoff_fuzz::failure(kTarget, "an error without a message", std::to_string(reply.status));
  }
  try {
    (void)reply.body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::exception& e) {
    handoff_fuzz::failure(kTarget, "the answer does not print", e.what());
  }
  handoff::live::Workbench& wb = r.workbench();
  if (!wb.state().is_object() || wb.frameJson().empty())
    handoff_fuzz::failure(kTarget, "the workbench stopped serving", std::string(route));
  return 0;
}
