// A minimal SVG plot writer for the benchmarks (no plotting library is
// assumed): dot series and line series on linear or log-10 axes, ticks,
// grid, legend; and horizontal bar charts. Text only; the files stay small
// because callers thin their points first (thin()).
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

/// Where a figure's legend goes: inside the plot, or under it (where it
/// hides no data; the picture grows by a row a series).
enum class legend_corner { top_left, below };

struct figure {
    std::string title;
    std::string note;  ///< a line under the title
    axis x, y;
    std::vector<series> data;
    legend_corner legend = legend_corner::top_left;
};

/// Writes `f` to `path`; false if the file cannot be written.
bool write(const std::string& path, const figure& f);

/// One bar of a bar chart: a labelled value, with an optional range drawn
/// as a whisker over it (e.g. the slowest and fastest of several rounds).
struct bar {
    std::string label;  ///< left of the bar
    double value = 0;
    std::string color;
    std::optional<std::pair<double, double>> range;
};

/// Horizontal bars, one a row, top to bottom in the given order, each with
/// its value written at its end; `value` is the horizontal axis (log-10 or
/// linear from 0).
struct bar_chart {
    std::string title;
    std::string note;
    axis value;
    std::string unit;  ///< after each bar's value, e.g. "jobs/s"
    std::vector<bar> bars;
};

/// Writes `c` to `path`; false if the file cannot be written.
bool write(const std::string& path, const bar_chart& c);

/// At most about `max_points` of `points`: an even stride, plus every point
/// whose y is among the largest `keep_top` (so the tail stays visible).
std::vector<point> thin(const std::vector<point>& points, std::size_t max_points,
                        std::size_t keep_top);

/// CDF of a sample: (value, fraction ≤ value), about `steps` points evenly
/// by rank plus every point of the top 2 %. With `of` larger than the
/// sample, the fractions are of `of` (the rest never came: the curve stops
/// below 1).
std::vector<point> cdf(std::vector<double> values, std::size_t steps, std::size_t of = 0);

}  // namespace svg
