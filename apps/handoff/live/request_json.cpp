#include "live/request_json.h"

#include <string>

namespace handoff::live {

using json = nlohmann::json;

Result<json> parseRequestJson(std::string_view text, int maxDepth) {
  bool tooDeep = false;
  // `depth` of a start event counts the containers around it (0 for the outermost).
  const json::parser_callback_t bound = [&](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= maxDepth) {
      tooDeep = true;
      return false;  // discarded, with everything inside it
    }
    return true;
  };
  json body = json::parse(text.begin(), text.end(), bound, false);
  if (tooDeep)
    return Error{"expected a JSON object nested at most " + std::to_string(maxDepth) + " levels deep"};
  if (body.is_discarded() || !body.is_object()) return Error{"expected a JSON object"};
  return body;
}

}  // namespace handoff::live
