// report_tool FORMAT RESULTS.jsonl [BASELINE]: renders a sweep's records as
// console | csv | json | html on stdout. The HTML check (check_html.py)
// and scripts/render-report's example use it.
#include <cstdio>
#include <iostream>
#include <string>

#include "schedlab/report/html.h"
#include "schedlab/report/table.h"

int main(int argc, char** argv) {
  using namespace schedlab::report;
  if (argc < 3) {
    std::cerr << "usage: report_tool console|csv|json|html RESULTS.jsonl [BASELINE]\n";
    return 2;
  }
  try {
    std::string format = argv[1];
    RecordFile f = read_records(argv[2]);
    TableOptions o;
    if (argc > 3) o.baseline = argv[3];
    if (format == "html") {
      std::cout << render_html(f.records, o, HtmlOptions{});
      return 0;
    }
    auto tables = build_tables(f.records, o);
    if (format == "console")
      std::cout << render_console(tables, colour_enabled(1));
    else if (format == "csv")
      std::cout << render_csv(tables);
    else if (format == "json")
      std::cout << render_json(tables);
    else {
      std::cerr << "unknown format " << format << "\n";
      return 2;
    }
  } catch (const schedlab::UserError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  return 0;
}
