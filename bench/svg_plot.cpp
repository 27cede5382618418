// A minimal SVG plot writer (see svg_plot.hpp).
#include "svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>

namespace svg {

namespace {

constexpr double width = 760, height = 440;
constexpr double left = 70, right = 20, top = 56, bottom = 52;

std::string escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else out += c;
    }
    return out;
}

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

std::string whole(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
}

std::string tick_label(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

/// An axis mapped onto [0, 1]: the range in the scale's own units.
struct scale {
    bool log = false;
    double lo = 0, hi = 1;
    double unit(double v) const {
        const double t = log ? std::log10(std::max(v, std::pow(10.0, lo))) : v;
        return std::clamp((t - lo) / (hi - lo), 0.0, 1.0);
    }
    std::vector<double> ticks() const {
        std::vector<double> out;
        if (log) {
            for (double d = std::ceil(lo - 1e-9); d <= hi + 1e-9; d += 1) out.push_back(std::pow(10.0, d));
            return out;
        }
        const double raw = (hi - lo) / 6;
        const double mag = std::pow(10.0, std::floor(std::log10(raw)));
        double step = mag;
        for (double m : {1.0, 2.0, 5.0, 10.0})
            if (raw <= m * mag) {
                step = m * mag;
                break;
            }
        for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
            out.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
        return out;
    }
};

scale make_scale(const axis& a, const std::vector<double>& values) {
    scale s;
    s.log = a.log;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (double v : values) {
        if (a.log && v <= 0) continue;
        const double t = a.log ? std::log10(v) : v;
        lo = std::min(lo, t);
        hi = std::max(hi, t);
    }
    if (!std::isfinite(lo)) lo = 0, hi = 1;
    if (a.log) {
        lo = std::floor(lo);
        hi = std::ceil(hi);
    } else {
        const double pad = (hi - lo) * 0.03;
        lo -= pad;
        hi += pad;
    }
    if (a.lo) lo = a.log ? std::log10(*a.lo) : *a.lo;
    if (a.hi) hi = a.log ? std::log10(*a.hi) : *a.hi;
    if (hi <= lo) hi = lo + 1;
    s.lo = lo;
    s.hi = hi;
    return s;
}

/// The <svg> element's opening, a white background, the title and the note.
void open_svg(std::ofstream& out, double h, const std::string& title, const std::string& note) {
    out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << h
        << "\" viewBox=\"0 0 " << width << ' ' << h << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
        << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        << "<text x=\"" << left << "\" y=\"20\" font-size=\"15\">" << escape(title) << "</text>\n"
        << "<text x=\"" << left << "\" y=\"38\" fill=\"#555\">" << escape(note) << "</text>\n";
}

}  // namespace

bool write(const std::string& path, const figure& f) {
    std::vector<double> xs, ys;
    for (const auto& s : f.data)
        for (const auto& [x, y] : s.points) {
            xs.push_back(x);
            ys.push_back(y);
        }
    const scale sx = make_scale(f.x, xs), sy = make_scale(f.y, ys);
    const double w = width - left - right, h = height - top - bottom;
    const auto px = [&](double v) { return left + sx.unit(v) * w; };
    const auto py = [&](double v) { return top + h - sy.unit(v) * h; };

    // A legend below the plot makes the picture taller by a row a series.
    const bool below = f.legend == legend_corner::below;
    const double total_h = below ? height + 8 + 16 * static_cast<double>(f.data.size()) : height;

    std::ofstream out(path);
    if (!out) return false;
    open_svg(out, total_h, f.title, f.note);
    // Grid, ticks and labels.
    out << "<g stroke=\"#ddd\">\n";
    for (double t : sx.ticks())
        out << "<line x1=\"" << num(px(t)) << "\" y1=\"" << top << "\" x2=\"" << num(px(t))
            << "\" y2=\"" << top + h << "\"/>\n";
    for (double t : sy.ticks())
        out << "<line x1=\"" << left << "\" y1=\"" << num(py(t)) << "\" x2=\"" << left + w
            << "\" y2=\"" << num(py(t)) << "\"/>\n";
    out << "</g>\n<g fill=\"#333\">\n";
    for (double t : sx.ticks())
        out << "<text x=\"" << num(px(t)) << "\" y=\"" << top + h + 16
            << "\" text-anchor=\"middle\">" << tick_label(t) << "</text>\n";
    for (double t : sy.ticks())
        out << "<text x=\"" << left - 6 << "\" y=\"" << num(py(t) + 4)
            << "\" text-anchor=\"end\">" << tick_label(t) << "</text>\n";
    out << "<text x=\"" << left + w / 2 << "\" y=\"" << height - 12
        << "\" text-anchor=\"middle\">" << escape(f.x.label) << "</text>\n"
        << "<text transform=\"translate(16 " << top + h / 2
        << ") rotate(-90)\" text-anchor=\"middle\">" << escape(f.y.label) << "</text>\n</g>\n"
        << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << w << "\" height=\"" << h
        << "\" fill=\"none\" stroke=\"#888\"/>\n";
    // Data.
    for (const auto& s : f.data) {
        if (s.line) {
            out << "<polyline fill=\"none\" stroke=\"" << s.color << "\" stroke-width=\"1.6\" points=\"";
            for (const auto& [x, y] : s.points) out << num(px(x)) << ',' << num(py(y)) << ' ';
            out << "\"/>\n";
        } else {
            // Dots as zero-length round-capped strokes: a few bytes a point.
            out << "<path stroke=\"" << s.color
                << "\" stroke-opacity=\"0.65\" stroke-width=\"3.6\" stroke-linecap=\"round\" d=\"";
            std::size_t k = 0;
            for (const auto& [x, y] : s.points)
                out << 'M' << num(px(x)) << ' ' << num(py(y)) << "h0" << (++k % 8 ? ' ' : '\n');
            out << "\"/>\n";
        }
    }
    // Legend: top left inside the plot, or below it.
    const double lx = below ? left : left + 10;
    double ly = below ? height + 6 : top + 16;
    for (const auto& s : f.data) {
        out << "<rect x=\"" << num(lx) << "\" y=\"" << ly - 9 << "\" width=\"10\" height=\"10\" fill=\""
            << s.color << "\"/><text x=\"" << num(lx + 16) << "\" y=\"" << ly << "\">" << escape(s.label)
            << "</text>\n";
        ly += 16;
    }
    out << "</svg>\n";
    return static_cast<bool>(out);
}

bool write(const std::string& path, const bar_chart& c) {
    // Labels take the left part; one row of row_h a bar.
    constexpr double label_w = 250, row_h = 30, value_w = 110;
    std::vector<double> values;
    for (const auto& b : c.bars) {
        values.push_back(b.value);
        if (b.range) values.insert(values.end(), {b.range->first, b.range->second});
    }
    axis value_axis = c.value;
    if (!value_axis.log && !value_axis.lo) value_axis.lo = 0.0;  // linear bars start at 0
    const scale sx = make_scale(value_axis, values);
    const double x0 = left + label_w, w = width - x0 - right - value_w;
    const double h = static_cast<double>(c.bars.size()) * row_h;
    const double total_h = top + h + bottom;
    const auto px = [&](double v) { return x0 + sx.unit(v) * w; };

    std::ofstream out(path);
    if (!out) return false;
    open_svg(out, total_h, c.title, c.note);
    out << "<g stroke=\"#ddd\">\n";
    for (double t : sx.ticks())
        out << "<line x1=\"" << num(px(t)) << "\" y1=\"" << top << "\" x2=\"" << num(px(t)) << "\" y2=\""
            << top + h << "\"/>\n";
    out << "</g>\n<g fill=\"#333\">\n";
    for (double t : sx.ticks())
        out << "<text x=\"" << num(px(t)) << "\" y=\"" << top + h + 16 << "\" text-anchor=\"middle\">"
            << tick_label(t) << "</text>\n";
    out << "<text x=\"" << x0 + w / 2 << "\" y=\"" << total_h - 12 << "\" text-anchor=\"middle\">"
        << escape(c.value.label) << "</text>\n</g>\n";
    double y = top;
    for (const auto& b : c.bars) {
        const double x1 = px(b.value), mid = y + row_h / 2;
        out << "<text x=\"" << x0 - 8 << "\" y=\"" << num(mid + 4) << "\" text-anchor=\"end\">"
            << escape(b.label) << "</text>\n"
            << "<rect x=\"" << x0 << "\" y=\"" << num(y + 5) << "\" width=\"" << num(x1 - x0)
            << "\" height=\"" << row_h - 10 << "\" fill=\"" << b.color << "\"/>\n";
        double end = x1;
        if (b.range) {
            const double a = px(b.range->first), z = px(b.range->second);
            out << "<path stroke=\"#222\" d=\"M" << num(a) << ' ' << num(mid) << "H" << num(z) << "M" << num(a)
                << ' ' << num(mid - 5) << "v10M" << num(z) << ' ' << num(mid - 5) << "v10\"/>\n";
            end = std::max(end, z);
        }
        out << "<text x=\"" << num(end + 6) << "\" y=\"" << num(mid + 4) << "\">" << whole(b.value)
            << (c.unit.empty() ? "" : " ") << escape(c.unit) << "</text>\n";
        y += row_h;
    }
    out << "<rect x=\"" << x0 << "\" y=\"" << top << "\" width=\"" << w << "\" height=\"" << h
        << "\" fill=\"none\" stroke=\"#888\"/>\n</svg>\n";
    return static_cast<bool>(out);
}

std::vector<point> thin(const std::vector<point>& points, std::size_t max_points, std::size_t keep_top) {
    if (points.size() <= max_points) return points;
    std::vector<std::size_t> by_y(points.size());
    for (std::size_t i = 0; i < by_y.size(); ++i) by_y[i] = i;
    std::sort(by_y.begin(), by_y.end(),
              [&](std::size_t a, std::size_t b) { return points[a].second > points[b].second; });
    std::set<std::size_t> keep(by_y.begin(), by_y.begin() + static_cast<long>(std::min(keep_top, by_y.size())));
    const std::size_t stride = (points.size() + max_points - 1) / max_points;
    for (std::size_t i = 0; i < points.size(); i += stride) keep.insert(i);
    std::vector<point> out;
    for (std::size_t i : keep) out.push_back(points[i]);
    return out;
}

std::vector<point> cdf(std::vector<double> values, std::size_t steps, std::size_t of) {
    std::vector<point> out;
    if (values.empty()) return out;
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    const double total = static_cast<double>(std::max(n, of));
    const std::size_t tail = n - std::min(n, std::max<std::size_t>(1, n / 50));
    const std::size_t stride = std::max<std::size_t>(1, n / std::max<std::size_t>(steps, 1));
    for (std::size_t i = 0; i < n; ++i)
        if (i % stride == 0 || i >= tail)
            out.emplace_back(values[i], static_cast<double>(i + 1) / total);
    return out;
}

}  // namespace svg
