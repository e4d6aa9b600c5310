// `topo --svg`: the DOT of a fixture rendered by the real `dot` and read back with libxml2.
#include "svg_render.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <map>
#include <sstream>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/input/input.h"
#include "p2pcheck/report/topo_dot.h"
#include "p2pcheck/source/error.h"
#include "test_paths.h"

namespace p2pcheck {
namespace {

bool dot_installed() {
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"})
    if (access((std::string(dir) + "/dot").c_str(), X_OK) == 0) return true;
  return false;
}

std::string text_of(xmlNode* node) {
  xmlChar* content = xmlNodeGetContent(node);
  std::string text = content ? reinterpret_cast<const char*>(content) : "";
  xmlFree(content);
  return text;
}

std::string attr(xmlNode* node, const char* name) {
  xmlChar* value = xmlGetProp(node, reinterpret_cast<const xmlChar*>(name));
  std::string text = value ? reinterpret_cast<const char*>(value) : "";
  xmlFree(value);
  return text;
}

// Graphviz writes each node as <g class="node ..."><title>NAME</title>...<text>label</text></g>,
// each edge as <g class="edge"><title>A&#45;&#45;B</title><path stroke=.../></g>.
struct SvgNode {
  std::string id, classes, text, stroke;
  int outlines = 0;  // shapes drawn with a stroke: 2 for a double border
};
struct Svg {
  std::map<std::string, SvgNode> nodes, edges;  // by title; an edge's is "upper--lower"
  double width_px = 0, view_width = 0;
};
void collect(xmlNode* node, Svg& svg);

// The <svg> element's size: Graphviz writes width="...pt"; 1 pt is 96/72 px.
double px(const std::string& length) {
  double value = std::stod(length);
  if (length.ends_with("pt")) return value * 96.0 / 72.0;
  if (length.ends_with("in")) return value * 96.0;
  return value;  // px, or a bare number (user units = px)
}

Svg parse_svg(const std::string& file) {
  Svg svg;
  xmlDoc* doc = xmlReadFile(file.c_str(), nullptr, XML_PARSE_NONET);
  EXPECT_NE(doc, nullptr) << file << " is not well-formed XML";
  if (!doc) return svg;
  xmlNode* root = xmlDocGetRootElement(doc);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(root->name)), "svg");
  svg.width_px = px(attr(root, "width"));
  std::string view = attr(root, "viewBox");  // "minx miny width height"
  if (!view.empty()) {
    std::istringstream in(view);
    double minx = 0, miny = 0;
    in >> minx >> miny >> svg.view_width;
  }
  collect(root, svg);
  xmlFreeDoc(doc);
  return svg;
}

void collect(xmlNode* node, Svg& out) {
  for (xmlNode* n = node; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE) continue;
    std::string classes = attr(n, "class");
    bool group = std::string(reinterpret_cast<const char*>(n->name)) == "g";
    if (group && (classes.rfind("node", 0) == 0 || classes == "edge")) {
      SvgNode svg{attr(n, "id"), classes, "", "", 0};
      std::string title;
      for (xmlNode* c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        std::string name = reinterpret_cast<const char*>(c->name);
        if (name == "title") title = text_of(c);
        if (name == "text" || name == "g") svg.text += text_of(c) + "\n";
        if ((name == "path" || name == "polygon" || name == "ellipse") && !attr(c, "stroke").empty()) {
          svg.stroke = attr(c, "stroke");
          ++svg.outlines;
        }
      }
      (classes == "edge" ? out.edges : out.nodes)[title] = svg;
    }
    collect(n->children, out);
  }
}

Svg render(const CheckReport& report, const std::string& file) {
  cli::render_svg(topology_dot(report), file);
  return parse_svg(file);
}
std::map<std::string, SvgNode> render_and_parse(const CheckReport& report, const std::string& file) {
  return render(report, file).nodes;
}

std::string id_of(const Bdf& bdf) {
  std::string id = "f_" + bdf.str();
  for (char& c : id)
    if (c == ':' || c == '.') c = '_';
  return id;
}

class SvgRender : public ::testing::Test {
 protected:
  void SetUp() override {
    // Never a silent skip: CI installs graphviz (scripts/setup-deps.sh); a machine that cannot
    // says so by setting P2PCHECK_WITHOUT_GRAPHVIZ=1, and the skip is printed.
    if (!dot_installed()) {
      if (std::getenv("P2PCHECK_WITHOUT_GRAPHVIZ"))
        GTEST_SKIP() << "Graphviz's dot is not installed and P2PCHECK_WITHOUT_GRAPHVIZ is set: SVG not tested";
      FAIL() << "Graphviz's dot is not installed (apt-get install graphviz, as scripts/setup-deps.sh does): the SVG "
                "pictures cannot be tested; set P2PCHECK_WITHOUT_GRAPHVIZ=1 to skip them knowingly";
    }
    dir_ = std::filesystem::temp_directory_path() / ("p2pcheck-svg-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};

TEST_F(SvgRender, FixtureHasEveryGpuAndNvmeAndMarksAcsRedirect) {
  auto source = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/xeon-broadwell-switch-acs/root");
  auto report = run_check(*source, CheckOptions{});
  std::string file = (dir_ / "topo.svg").string();
  auto nodes = render_and_parse(*report, file);
  ASSERT_FALSE(report->inv.gpus.empty());
  for (const Bdf& gpu : report->inv.gpus) {
    ASSERT_TRUE(nodes.count(id_of(gpu))) << "no SVG node for GPU " << gpu.str();
    EXPECT_NE(nodes[id_of(gpu)].text.find(gpu.str()), std::string::npos);
  }
  for (const NvmeController& nvme : report->inv.nvmes) ASSERT_TRUE(nodes.count(id_of(nvme.bdf))) << nvme.bdf.str();
  // Downstream port 9 redirects (ACS RR CR on); port 8 has no ACS capability.
  const SvgNode& redirect = nodes.at("f_0000_03_09_0");
  EXPECT_EQ(redirect.id, "acs-redirect-f_0000_03_09_0");
  EXPECT_NE(redirect.text.find("ACS redirect"), std::string::npos) << redirect.text;
  EXPECT_EQ(redirect.stroke, "#cd0000");  // red3
  EXPECT_EQ(redirect.outlines, 2);        // the double border
  const SvgNode& plain = nodes.at("f_0000_03_08_0");
  EXPECT_EQ(plain.id.find("acs-redirect"), std::string::npos);
  EXPECT_EQ(plain.text.find("ACS redirect"), std::string::npos);
  EXPECT_EQ(plain.outlines, 1);
  EXPECT_TRUE(nodes.count("hb_0000_00"));
  // Only the SVG is left: the temporary files were renamed or removed.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), std::filesystem::directory_iterator()), 1);
}

TEST_F(SvgRender, APlanDrawsLikeAMachine) {
  OpenedDump plan =
      open_input_path(std::string(P2PCHECK_SOURCE_DIR) + "/fixtures/plans/xeon-2socket-hostbridges.toml", {});
  CheckOptions options;
  options.not_carried = uncarried_areas(*plan.info);
  auto report = run_check(*plan.source, options);
  auto nodes = render_and_parse(*report, (dir_ / "plan.svg").string());
  for (const Bdf& gpu : report->inv.gpus) EXPECT_TRUE(nodes.count(id_of(gpu))) << gpu.str();
  for (const NvmeController& nvme : report->inv.nvmes) EXPECT_TRUE(nodes.count(id_of(nvme.bdf))) << nvme.bdf.str();
  EXPECT_TRUE(nodes.count("cpu")) << "pairs across host bridges go through the CPU fabric node";
}

// Issue 36: 8 GPUs and 9 NVMe were drawn 3.7-5k px wide; the picture must fit a screen.
TEST_F(SvgRender, TheEightGpuEpycFitsAScreen) {
  auto source = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/epyc-mi300x-8gpu/root");
  CheckOptions options;
  options.load = Load::kEverything;  // as `topo --svg` loads it: NUMA boxes drawn
  auto report = run_check(*source, options);
  Svg svg = render(*report, (dir_ / "epyc.svg").string());
  std::cout << "epyc-mi300x-8gpu topo --svg: " << svg.width_px << " px wide (viewBox " << svg.view_width << " pt)\n";
  EXPECT_GT(svg.width_px, 0);
  EXPECT_LE(svg.width_px, 1600);
  EXPECT_LE(svg.view_width * 96.0 / 72.0, 1600);
  for (const Bdf& gpu : report->inv.gpus) EXPECT_TRUE(svg.nodes.count(id_of(gpu))) << gpu.str();
}

// A pair sent up to the root complex by ACS redirect colours the links it really takes: the
// switch's upstream port to the root port, the root port to the host bridge.
TEST_F(SvgRender, ARedirectedPairColoursItsRouteUpToTheHostBridge) {
  auto source = open_tree_source(std::string(P2PCHECK_FIXTURES) + "/xeon-broadwell-switch-acs/root");
  CheckOptions options;
  options.selection.gpu = {"05:00.0"};  // below port 9, which redirects
  options.selection.nvme = {"06:00.0"};
  auto report = run_check(*source, options);
  ASSERT_EQ(report->pairs.size(), 1u);
  ASSERT_EQ(report->pairs[0].walk.acs_redirect.size(), 1u);
  Svg svg = render(*report, (dir_ / "redirect.svg").string());
  const std::string red = "#cd0000", grey = "#999999";  // red3: the pair is refused; grey60: no pair
  for (const char* link :
       {"hb_0000_00--f_0000_00_02_0", "f_0000_00_02_0--f_0000_02_00_0", "f_0000_02_00_0--f_0000_03_09_0",
        "f_0000_03_09_0--f_0000_05_00_0", "f_0000_02_00_0--f_0000_03_10_0", "f_0000_03_10_0--f_0000_06_00_0"}) {
    ASSERT_TRUE(svg.edges.count(link)) << link;
    EXPECT_EQ(svg.edges[link].stroke, red) << link;
  }
  for (const char* link : {"hb_0000_00--f_0000_00_01_0", "f_0000_02_00_0--f_0000_03_08_0"}) {
    ASSERT_TRUE(svg.edges.count(link)) << link;
    EXPECT_EQ(svg.edges[link].stroke, grey) << link << " is on no route";
  }
  EXPECT_NE(svg.nodes.at("f_0000_05_00_0").text.find("refused redirected to host: nvme0"), std::string::npos)
      << svg.nodes.at("f_0000_05_00_0").text;
}

TEST_F(SvgRender, AFailedRenderLeavesNoFile) {
  std::string file = (dir_ / "broken.svg").string();
  EXPECT_THROW(cli::render_svg("graph { this is not dot", file), Error);
  EXPECT_FALSE(std::filesystem::exists(file));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), std::filesystem::directory_iterator()), 0);
}

}  // namespace
}  // namespace p2pcheck
