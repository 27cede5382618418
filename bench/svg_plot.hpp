// A minimal SVG plot writer for the benchmarks (no plotting library is
// assumed): dot series and line series on linear or log-10 axes, ticks,
// grid, legend. Text only; the files stay small because callers thin their
// points first (thin()).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace svg {

using point = std::pair<double, double>;

struct series {
    std::string label;
    std::string color;  ///< any SVG colour, e.g. "#1f77b4"
    std::vector<point> points;
    bool line = false;  ///< a polyline through the points (in order) instead of dots
};

struct axis {
    std::string label;
    bool log = false;  ///< log-10 scale; values ≤ 0 are drawn at the lower bound
    std::optional<double> lo, hi;
};

struct figure {
    std::string title;
    std::string note;  ///< a line under the title
    axis x, y;
    std::vector<series> data;
};

/// Writes `f` to `path`; false if the file cannot be written.
bool write(const std::string& path, const figure& f);

/// At most about `max_points` of `points`: an even stride, plus every point
/// whose y is among the largest `keep_top` (so the tail stays visible).
std::vector<point> thin(const std::vector<point>& points, std::size_t max_points,
                        std::size_t keep_top);

/// CDF of a sample: (value, fraction ≤ value), about `steps` points evenly
/// by rank plus every point of the top 2 %.
std::vector<point> cdf(std::vector<double> values, std::size_t steps);

}  // namespace svg
