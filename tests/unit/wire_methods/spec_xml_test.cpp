// Checks the method codec against the AMQP 0-9-1 spec XML (RabbitMQ's
// variant, with confirm, exchange bindings and basic.nack), read at run
// time from the path in TARRY_AMQP_SPEC_XML (the meson option
// amqp_spec_xml). For every method tarry implements: class id, method id,
// name, content flag and the ordered argument names and wire types. Every
// method of the XML must be implemented or listed below as skipped; every
// implemented method must be in the XML or listed below as an extension.
#include "tarry/amqp/wire/methods.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace wire = tarry::amqp::wire;
using wire::wire_type;

namespace {

// ---- a small XML scanner --------------------------------------------------
// Enough XML for the spec: elements with quoted attributes, comments,
// processing instructions and declarations skipped, text ignored, the five
// predefined entities decoded. No namespaces, no CDATA, no DTD internals.

struct xml_tag {
    std::string name;
    std::map<std::string, std::string> attributes;
    bool closing = false;       // </name>
    bool self_closing = false;  // <name/>

    std::string attribute(const std::string& key) const {
        const auto it = attributes.find(key);
        return it == attributes.end() ? std::string() : it->second;
    }
};

class xml_scanner {
public:
    explicit xml_scanner(std::string_view text) : text_(text) {}

    /// The next tag, or nullopt at the end or on an error (see error()).
    std::optional<xml_tag> next() {
        while (error_.empty()) {
            const auto lt = text_.find('<', pos_);
            if (lt == std::string_view::npos) return std::nullopt;
            pos_ = lt;
            if (skip("<!--", "-->") || skip("<?", "?>") || skip("<!", ">")) continue;
            return tag();
        }
        return std::nullopt;
    }

    const std::string& error() const noexcept { return error_; }

private:
    bool skip(std::string_view open, std::string_view close) {
        if (text_.substr(pos_, open.size()) != open) return false;
        const auto end = text_.find(close, pos_ + open.size());
        if (end == std::string_view::npos) return fail("unterminated " + std::string(open));
        pos_ = end + close.size();
        return true;
    }

    std::optional<xml_tag> tag() {
        xml_tag t;
        ++pos_;  // '<'
        if (peek() == '/') {
            t.closing = true;
            ++pos_;
        }
        t.name = name();
        if (t.name.empty()) return bad("a tag without a name");
        for (;;) {
            skip_space();
            if (pos_ >= text_.size()) return bad("unterminated <" + t.name);
            const char c = text_[pos_];
            if (c == '>') {
                ++pos_;
                return t;
            }
            if (c == '/' && !t.closing) {
                if (pos_ + 1 >= text_.size() || text_[pos_ + 1] != '>')
                    return bad("stray '/' in <" + t.name);
                pos_ += 2;
                t.self_closing = true;
                return t;
            }
            if (t.closing) return bad("attributes in </" + t.name);
            std::string key = name();
            skip_space();
            if (key.empty() || peek() != '=')
                return bad("malformed attribute in <" + t.name);
            ++pos_;
            skip_space();
            const char quote = peek();
            if (quote != '"' && quote != '\'')
                return bad("unquoted attribute " + key + " in <" + t.name);
            const auto end = text_.find(quote, pos_ + 1);
            if (end == std::string_view::npos)
                return bad("unterminated attribute " + key);
            auto value = decode_entities(text_.substr(pos_ + 1, end - pos_ - 1));
            if (!value) return bad("bad entity in attribute " + key);
            pos_ = end + 1;
            if (!t.attributes.emplace(std::move(key), std::move(*value)).second)
                return bad("duplicate attribute in <" + t.name);
        }
    }

    std::string name() {
        const auto start = pos_;
        while (pos_ < text_.size()) {
            const char c = text_[pos_];
            const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
                            c == ':';
            if (!ok) break;
            ++pos_;
        }
        return std::string(text_.substr(start, pos_ - start));
    }

    static std::optional<std::string> decode_entities(std::string_view s) {
        static const std::pair<std::string_view, char> entities[] = {
            {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
        std::string out;
        for (std::size_t i = 0; i < s.size();) {
            if (s[i] != '&') {
                out += s[i++];
                continue;
            }
            bool known = false;
            for (const auto& [entity, c] : entities) {
                if (s.substr(i, entity.size()) == entity) {
                    out += c;
                    i += entity.size();
                    known = true;
                    break;
                }
            }
            if (!known) return std::nullopt;
        }
        return out;
    }

    void skip_space() {
        while (pos_ < text_.size() &&
               (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                text_[pos_] == '\r'))
            ++pos_;
    }
    char peek() const noexcept { return pos_ < text_.size() ? text_[pos_] : '\0'; }
    // Records the first error; true so that skip() ends the scan loop.
    bool fail(const std::string& why) {
        if (error_.empty()) error_ = why + " (at byte " + std::to_string(pos_) + ")";
        return true;
    }
    std::nullopt_t bad(const std::string& why) {
        fail(why);
        return std::nullopt;
    }

    std::string_view text_;
    std::size_t pos_ = 0;
    std::string error_;
};

// ---- the spec as the XML states it ----------------------------------------

struct spec_argument {
    std::string name;
    std::string domain;  // the domain or, for reserved arguments, the type
    std::string type;    // resolved wire type name
};

struct spec_method {
    std::string name;  // "class.method"
    std::uint16_t class_id = 0;
    std::uint16_t method_id = 0;
    bool content = false;
    std::vector<spec_argument> arguments;
};

struct spec {
    std::vector<std::string> classes;  // "connection (10)", ...
    std::map<std::pair<std::uint16_t, std::uint16_t>, spec_method> methods;
};

std::uint16_t to_id(const std::string& s) {
    REQUIRE_MESSAGE(!s.empty(), "an index attribute is missing");
    const unsigned long v = std::stoul(s);
    REQUIRE(v <= 0xFFFF);
    return static_cast<std::uint16_t>(v);
}

spec parse_spec(std::string_view text) {
    xml_scanner scanner(text);
    spec out;
    std::map<std::string, std::string> domains;  // domain name → wire type
    std::vector<std::string> open;               // element names, outermost first
    std::string class_name;
    std::uint16_t class_id = 0;
    spec_method* current = nullptr;

    while (auto t = scanner.next()) {
        if (t->closing) {
            REQUIRE_MESSAGE((!open.empty() && open.back() == t->name),
                            "mismatched </", t->name, ">");
            open.pop_back();
            if (t->name == "method") current = nullptr;
            continue;
        }
        if (t->name == "domain") {
            domains[t->attribute("name")] = t->attribute("type");
        } else if (t->name == "class") {
            class_name = t->attribute("name");
            class_id = to_id(t->attribute("index"));
            out.classes.push_back(class_name + " (" + std::to_string(class_id) + ")");
        } else if (t->name == "method") {
            REQUIRE_MESSAGE((!open.empty() && open.back() == "class"), "a method outside a class");
            spec_method m;
            m.name = class_name + "." + t->attribute("name");
            m.class_id = class_id;
            m.method_id = to_id(t->attribute("index"));
            m.content = t->attribute("content") == "1";
            const auto key = std::pair{m.class_id, m.method_id};
            REQUIRE_MESSAGE(!out.methods.contains(key), "ids twice in the XML: ", m.name);
            current = &out.methods.emplace(key, std::move(m)).first->second;
        } else if (t->name == "field" && current && !open.empty() && open.back() == "method") {
            // Fields directly in a class are content properties, not arguments.
            const std::string type = t->attribute("type");
            current->arguments.push_back(
                {t->attribute("name"), type.empty() ? t->attribute("domain") : type, {}});
        }
        if (!t->self_closing) open.push_back(t->name);
    }
    REQUIRE_MESSAGE(scanner.error().empty(), "spec XML: ", scanner.error());
    REQUIRE_MESSAGE(open.empty(), "spec XML: <", open.back(), "> is never closed");

    // Domains name either a wire type or another domain.
    for (auto& [key, m] : out.methods) {
        for (auto& a : m.arguments) {
            std::string type = a.domain;
            for (int hops = 0; hops < 8 && domains.contains(type) && domains[type] != type; ++hops)
                type = domains[type];
            a.type = type;
        }
    }
    return out;
}

std::string read_spec_file() {
    const char* path = std::getenv("TARRY_AMQP_SPEC_XML");
    REQUIRE_MESSAGE(path != nullptr,
                    "TARRY_AMQP_SPEC_XML is not set: run this test through `meson test`, "
                    "which passes the amqp_spec_xml option");
    std::ifstream in(path, std::ios::binary);
    REQUIRE_MESSAGE(in.good(), "cannot read the AMQP spec XML at '", path,
                    "': install Debian's amqp-specs package or set the meson option "
                    "amqp_spec_xml to the 0-9-1 (rabbit) spec XML");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

const spec& the_spec() {
    static const spec s = parse_spec(read_spec_file());
    return s;
}

// ---- what tarry does differently, on purpose -------------------------------

struct expected_argument {
    std::string_view name;
    wire_type type;
};

// Methods RabbitMQ speaks that this XML predates. Their arguments are
// stated here from RabbitMQ's documentation of the extensions.
struct extension {
    std::string_view name;
    std::uint16_t class_id, method_id;
    std::vector<expected_argument> arguments;
};

const std::vector<extension>& extensions() {
    static const std::vector<extension> list{
        {"connection.blocked", 10, 60, {{"reason", wire_type::shortstr}}},
        {"connection.unblocked", 10, 61, {}},
        {"connection.update-secret",
         10,
         70,
         {{"new-secret", wire_type::longstr}, {"reason", wire_type::shortstr}}},
        {"connection.update-secret-ok", 10, 71, {}},
    };
    return list;
}

// Methods of the XML that tarry deliberately does not implement, with the
// reason. None at present: tx has no arguments, so it costs nothing to
// decode it too.
struct skipped {
    std::string_view name;
    std::string_view reason;
};
const std::vector<skipped> skipped_methods{};

bool is_skipped(std::string_view name) {
    for (const auto& s : skipped_methods)
        if (s.name == name) return true;
    return false;
}

}  // namespace

TEST_CASE("the spec XML parses into classes and methods") {
    const spec& s = the_spec();
    INFO("classes: ", s.classes.size(), ", methods: ", s.methods.size());
    CHECK(s.classes.size() >= 7);
    CHECK(s.methods.size() >= 50);
    for (const auto& [key, m] : s.methods) {
        for (const auto& a : m.arguments) {
            INFO(m.name, " argument ", a.name, " of domain ", a.domain);
            CHECK(!a.type.empty());
        }
    }
}

TEST_CASE("every implemented method matches the spec XML") {
    const spec& s = the_spec();
    std::size_t compared = 0;
    for (const wire::method_info& info : wire::method_catalog()) {
        INFO(info.name);
        const auto it = s.methods.find({info.class_id, info.method_id});
        bool is_extension = false;
        for (const auto& e : extensions()) is_extension = is_extension || e.name == info.name;
        if (is_extension) {
            CHECK_MESSAGE(it == s.methods.end(),
                          "listed as an extension but the XML has it: compare it instead");
            continue;
        }
        REQUIRE_MESSAGE(it != s.methods.end(), "not in the spec XML and not listed as an extension");
        const spec_method& m = it->second;
        CHECK(info.name == m.name);
        CHECK(info.has_content == m.content);
        REQUIRE(info.arguments.size() == m.arguments.size());
        for (std::size_t i = 0; i < m.arguments.size(); ++i) {
            INFO("argument ", i, ": spec ", m.arguments[i].name, " ", m.arguments[i].type);
            CHECK(info.arguments[i].name == m.arguments[i].name);
            CHECK(wire::to_string(info.arguments[i].type) == m.arguments[i].type);
        }
        ++compared;
    }
    CHECK(compared + extensions().size() == wire::method_catalog().size());
}

TEST_CASE("extensions are implemented as RabbitMQ defines them") {
    for (const auto& e : extensions()) {
        INFO(e.name);
        const wire::method_info* info = wire::find_method(e.class_id, e.method_id);
        REQUIRE(info != nullptr);
        CHECK(info->name == e.name);
        CHECK(!info->has_content);
        REQUIRE(info->arguments.size() == e.arguments.size());
        for (std::size_t i = 0; i < e.arguments.size(); ++i) {
            CHECK(info->arguments[i].name == e.arguments[i].name);
            CHECK(info->arguments[i].type == e.arguments[i].type);
        }
    }
}

TEST_CASE("every method of the spec XML is implemented or deliberately skipped") {
    const spec& s = the_spec();
    for (const auto& [key, m] : s.methods) {
        INFO(m.name, " (", key.first, ".", key.second, ")");
        const bool implemented = wire::find_method(key.first, key.second) != nullptr;
        const bool skip = is_skipped(m.name);
        CHECK_MESSAGE(implemented != skip,
                      (implemented ? "implemented but listed as skipped"
                                   : "neither implemented nor listed as skipped"));
    }
    for (const auto& sk : skipped_methods) {
        INFO(sk.name);
        CHECK(!sk.reason.empty());
    }
}
