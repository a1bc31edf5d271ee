#pragma once
// How each loop's outermost range is shared among the participants of a hybrid chain (the CPU
// workers as one, each accelerator), after OPS's per-loop balancing: every participant's
// seconds per row of a loop is a moving average over the chains run so far, and the rows are
// shared in proportion to the rates, which makes every participant finish together.

#include <map>
#include <string>
#include <vector>

namespace tessera::loops::detail {

class Balancer {
 public:
  /// `rate`: weight of the newest measurement in the moving average, in (0, 1]; `threshold`: how
  /// much sooner (a fraction, 0 to 1) a new split must finish to replace the last.
  Balancer(std::vector<std::string> participants, double rate, double threshold = 0.03);

  /// Rows per participant for `rows` rows of the loop `key`. Shares are equal until every
  /// participant has been measured; a new split replaces the last one only when it would finish
  /// `threshold` sooner, so timing noise does not move rows and rebuild the chain every time.
  const std::vector<int>& split(const std::string& key, int rows);
  /// After a chain: participant p ran rows[p] rows of `key` in seconds[p]. Ignored when some
  /// part took under 50 µs: too short to tell speeds apart from launch cost and noise.
  void measured(const std::string& key, const std::vector<int>& rows, const std::vector<double>& seconds);

  const std::vector<std::string>& participants() const noexcept { return participants_; }
  /// Whether every participant has been timed on `key`.
  bool has_rates(const std::string& key) const;
  /// The split last given for `key`; empty before the first.
  std::vector<int> last_split(const std::string& key) const;

 private:
  struct LoopBalance {
    std::vector<double> seconds_per_row;  // 0: not measured yet
    int rows = 0;
    std::vector<int> split;
  };
  std::vector<int> ideal(const LoopBalance& loop, int rows) const;

  std::vector<std::string> participants_;
  double rate_;
  double threshold_;
  std::map<std::string, LoopBalance> loops_;
};

}  // namespace tessera::loops::detail
