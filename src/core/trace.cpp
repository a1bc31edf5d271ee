#include <tessera/core/error.hpp>
#include <tessera/core/trace.hpp>

#include "partial_file.hpp"

#include <cstdio>
#include <ostream>
#include <sstream>

namespace tessera {

namespace {

void write_json_string(std::ostream& out, const std::string& s) {
  out << '"';
  for (char c : s) {
    switch (c) {
      case '"': out << "\\\""; break;
      case '\\': out << "\\\\"; break;
      case '\n': out << "\\n"; break;
      case '\t': out << "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out << buf;
        } else {
          out << c;
        }
    }
  }
  out << '"';
}

// Trace-event timestamps are microseconds; keep the nanoseconds as a fraction.
void write_us(std::ostream& out, std::uint64_t ns) { out << ns / 1000 << '.' << (ns % 1000) / 100 << (ns % 100) / 10 << ns % 10; }

}  // namespace

std::uint32_t Trace::add_track(std::string name) {
  tracks.push_back(std::move(name));
  return static_cast<std::uint32_t>(tracks.size() - 1);
}

void Trace::write_chrome_json(std::ostream& out) const {
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (std::size_t t = 0; t < tracks.size(); ++t) {
    sep();
    out << R"({"ph":"M","pid":1,"tid":)" << t << R"(,"name":"thread_name","args":{"name":)";
    write_json_string(out, tracks[t]);
    out << "}}";
  }
  for (const TraceEvent& e : events) {
    sep();
    out << R"({"ph":"X","pid":1,"tid":)" << e.track << ",\"name\":";
    write_json_string(out, e.name);
    out << ",\"cat\":";
    write_json_string(out, e.category);
    out << ",\"ts\":";
    write_us(out, e.begin_ns);
    out << ",\"dur\":";
    write_us(out, e.end_ns >= e.begin_ns ? e.end_ns - e.begin_ns : 0);
    out << '}';
  }
  out << "\n]}\n";
}

void Trace::save(const std::string& path) const {
  // Whole or absent: written beside `path` and renamed (detail::PartialFile).
  std::ostringstream text;
  write_chrome_json(text);
  const std::string json = text.str();
  detail::PartialFile file(path, "Trace::save: ");
  if (std::fwrite(json.data(), 1, json.size(), file.get()) != json.size())
    throw Error("Trace::save: writing '" + path + "' failed (disk full?); nothing was left under that name");
  file.commit();
}

}  // namespace tessera
