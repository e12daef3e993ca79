// nexmark_emit: prints Nexmark events as JSON lines, like the reference generator
// (docs/nexmark.md).
//
//   nexmark_emit N [OUT] [--param=value ...]
//
// Writes events [first-event, first-event + N) to OUT, or to stdout without OUT. Parameters (all
// optional, defaults = the reference's): --rate --generators --base-time --first-id --first-num
// --first-event --max-events --person-proportion --auction-proportion --bid-proportion
// --hot-auction-ratio --hot-bidders-ratio --hot-sellers-ratio --in-flight-auctions
// --active-people --avg-person-size --avg-auction-size --avg-bid-size --out-of-order-group
// --seed (decimal or 0x-hex).
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>

#include "sources/nexmark/nexmark_config.h"
#include "sources/nexmark/nexmark_json.h"

namespace {

using sluice::nexmark::NexmarkConfig;

bool ParseInt(std::string_view text, int64_t* out) {
  const auto r = std::from_chars(text.data(), text.data() + text.size(), *out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

bool ParseSeed(std::string_view text, uint64_t* out) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  const auto r = std::from_chars(text.data(), text.data() + text.size(), *out, base);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

int Usage(const char* message) {
  std::fprintf(stderr,
               "nexmark_emit: %s\nusage: nexmark_emit N [OUT] [--param=value ...]\n"
               "params: --rate --generators --base-time --first-id --first-num --first-event\n"
               "        --max-events --person-proportion --auction-proportion --bid-proportion\n"
               "        --hot-auction-ratio --hot-bidders-ratio --hot-sellers-ratio\n"
               "        --in-flight-auctions --active-people --avg-person-size\n"
               "        --avg-auction-size --avg-bid-size --out-of-order-group --seed\n",
               message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  NexmarkConfig config;
  int64_t first_event = 0;
  int64_t count = -1;
  std::string out_path;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.substr(0, 2) != "--") {
      if (count < 0) {
        if (!ParseInt(arg, &count) || count < 0) return Usage("N must be a count >= 0");
      } else if (out_path.empty()) {
        out_path = std::string(arg);
      } else {
        return Usage("too many positional arguments");
      }
      continue;
    }
    const size_t eq = arg.find('=');
    if (eq == std::string_view::npos) return Usage("parameters are --name=value");
    const std::string_view name = arg.substr(2, eq - 2);
    const std::string_view value = arg.substr(eq + 1);
    if (name == "seed") {
      if (!ParseSeed(value, &config.seed)) return Usage("bad --seed");
      continue;
    }
    int64_t v = 0;
    if (!ParseInt(value, &v)) return Usage("parameter values are integers");
    if (name == "rate")
      config.events_per_second = v;
    else if (name == "generators")
      config.num_event_generators = v;
    else if (name == "base-time")
      config.base_time_ms = v;
    else if (name == "first-id")
      config.first_event_id = v;
    else if (name == "first-num")
      config.first_event_number = v;
    else if (name == "first-event")
      first_event = v;
    else if (name == "max-events")
      config.max_events = v;
    else if (name == "person-proportion")
      config.person_proportion = v;
    else if (name == "auction-proportion")
      config.auction_proportion = v;
    else if (name == "bid-proportion")
      config.bid_proportion = v;
    else if (name == "hot-auction-ratio")
      config.hot_auction_ratio = v;
    else if (name == "hot-bidders-ratio")
      config.hot_bidders_ratio = v;
    else if (name == "hot-sellers-ratio")
      config.hot_sellers_ratio = v;
    else if (name == "in-flight-auctions")
      config.num_in_flight_auctions = v;
    else if (name == "active-people")
      config.num_active_people = v;
    else if (name == "avg-person-size")
      config.avg_person_byte_size = v;
    else if (name == "avg-auction-size")
      config.avg_auction_byte_size = v;
    else if (name == "avg-bid-size")
      config.avg_bid_byte_size = v;
    else if (name == "out-of-order-group")
      config.out_of_order_group_size = v;
    else
      return Usage(("unknown parameter --" + std::string(name)).c_str());
  }
  if (count < 0) count = 100000;  // the reference's default N

  sluice::Status status;
  if (out_path.empty()) {
    std::ios::sync_with_stdio(false);
    status = sluice::nexmark::EmitJson(config, first_event, count, std::cout);
  } else {
    std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
    if (!out) {
      std::fprintf(stderr, "nexmark_emit: cannot open %s: %s\n", out_path.c_str(),
                   std::strerror(errno));
      return 1;
    }
    status = sluice::nexmark::EmitJson(config, first_event, count, out);
    out.close();
    if (status.ok() && !out) status = sluice::Status::IOError("closing " + out_path);
  }
  if (!status.ok()) {
    std::fprintf(stderr, "nexmark_emit: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
