package report

import "html/template"

// pageTemplate is the HTML page. html/template escapes every string; only
// chart SVG (escaped when built) is inserted as trusted markup.
var pageTemplate = template.Must(template.New("page").
	Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} - tierbench report</title>
<style>
body{margin:0;background:#fafafa;color:#1d1d1f;font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:20px 28px 64px;background:#fff}
h1{font-size:26px;margin:0 0 10px}
h1,h2,h3,p,li,figcaption{overflow-wrap:anywhere}
.answer{border-left:5px solid #1f77b4;background:#f5f9fd;padding:6px 16px 4px;margin:0 0 12px;display:flex;flex-direction:column}
.answer-lines{margin:6px 0;padding-left:20px}
.answer-lines li{font-size:16px;margin:4px 0;color:#111}
figure.headline{margin:8px 0 6px}
figure.headline svg{border:0;background:#fff}
.chart-narrow{display:none}
td.more{white-space:nowrap}
td.more details[open]{white-space:normal;min-width:22em}
td.more summary{cursor:pointer;color:#1f5f99}
td.more dl{margin:4px 0;display:grid;grid-template-columns:max-content 1fr;gap:2px 10px}
td.more dt{color:#555}td.more dd{margin:0;overflow-wrap:anywhere}
h2{font-size:21px;margin:36px 0 10px;padding-bottom:4px;border-bottom:2px solid #e4e4e4}
h3{font-size:17px;margin:24px 0 8px}
.facts{color:#555;margin:0 0 12px}.facts span{margin-right:16px;white-space:nowrap}
nav a{margin-right:14px}
.question{font-style:italic}
.verdicts li{font-size:16px;font-weight:600;margin:6px 0}
.callout{border-left:5px solid #888;background:#f4f4f4;padding:8px 14px;margin:12px 0}
.callout.warn{border-color:#d9822b;background:#fff5e6}
.callout.contradiction{border-color:#c62828;background:#ffebee;color:#b71c1c}
.callout ul{margin:4px 0;padding-left:20px}
table{border-collapse:collapse;font-size:13px;margin:6px 0 14px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f2f2f2;white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th::after{content:" \2195";color:#aaa;font-size:11px}
table.sortable th[aria-sort=ascending]::after{content:" \25B2";color:#333}
table.sortable th[aria-sort=descending]::after{content:" \25BC";color:#333}
tr.failed td{background:#fdecec}
tr.contradiction td{background:#ffcdd2;color:#b71c1c;font-weight:600}
tr.warn td{background:#fff5e6}
tr.verdict-better td:last-child{color:#1a7f37;font-weight:600}
tr.verdict-worse td:last-child{color:#c62828;font-weight:600}
figure{margin:10px 0 22px}
figure svg{max-width:100%;height:auto;border:1px solid #eee}
figcaption,.note{font-size:13px;color:#555}
pre{background:#f6f6f6;padding:10px;overflow:auto;font-size:12px}
.scroll{overflow-x:auto}
table.fit{table-layout:fixed;width:100%}
table.fit th{white-space:normal}
table.fit td{overflow-wrap:anywhere}
@media (max-width:640px){
main{padding:12px 12px 48px}
h1{font-size:21px;margin-bottom:8px}
h2{font-size:19px}
.answer{padding:4px 8px 2px}
.answer-lines{padding-left:16px}
.answer-lines li{font-size:15px;line-height:1.4}
figure.headline{order:-1;margin:4px 0}
.chart-wide{display:none}
.chart-narrow{display:inline}
table.fit,table.fit tbody,table.fit tr,table.fit td{display:block;width:auto}
table.fit thead{display:none}
table.fit tr{border:1px solid #ddd;margin:0 0 8px}
table.fit td{border:0;border-top:1px solid #eee}
table.fit td:first-child{border-top:0;font-weight:600}
table.fit td::before{content:attr(data-label) ": ";color:#555}
}
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<section id="answer" class="answer" aria-label="The answer">
{{if .Answer}}<ul class="answer-lines">{{range .Answer}}<li>{{.}}</li>{{end}}</ul>
{{else}}<p>No answer: no placement other than the baseline has data to compare.</p>{{end}}
{{with .Headline}}<figure class="headline">{{.Inline}}<figcaption>{{$.HeadlineNote}} Verdicts are judged as <a href="#method">the method</a> says; every client count: <a href="#chart-ratio">the ratio charts</a>.</figcaption></figure>{{end}}
</section>
<nav><a href="#question">Question</a><a href="#setup">Setup</a><a href="#charts">Charts</a><a href="#results">Results</a></nav>

<section id="question">
<h2>The question and how it was answered</h2>
<p class="facts">{{range .Facts}}<span><b>{{.K}}</b> {{.V}}</span> {{end}}</p>
<p class="question">{{.Question}}</p>
{{if .Verdicts}}<h3>At {{.Clients}} clients</h3>
<ul class="verdicts">{{range .Verdicts}}<li>{{.}}</li>{{end}}</ul>{{end}}
<p class="note" id="method">{{.Method}}</p>
{{if .Notes}}<div class="callout warn" role="note"><strong>Read these figures with care:</strong><ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul></div>{{end}}
{{if .Warnings}}<div class="callout" role="note"><ul>{{range .Warnings}}<li>{{.}}</li>{{end}}</ul></div>{{end}}
{{if .CrashSentences}}<h3 id="crash">What a crash costs</h3>
<p class="note">Each crash run killed its engine at a seeded moment inside its measured window, restarted it on what survived, and checked every write the engine had acknowledged. Throughput is from the same cell's runs without a crash.</p>
{{range .Contradictions}}<div class="callout contradiction" role="alert"><strong>Contradicts the documented mode:</strong> {{.}}</div>{{end}}
{{template "table" .Crashes}}
{{if .CrashModels}}<p class="note">Power-loss models:</p><ul class="note">{{range .CrashModels}}<li>{{.}}</li>{{end}}</ul>{{end}}
<ul class="verdicts">{{range .CrashSentences}}<li>{{.}}</li>{{end}}</ul>{{end}}
</section>

<section id="setup">
<h2>Setup</h2>
<h3>Environment</h3>
{{template "table" .Env}}
<h3>Tiers</h3>
{{template "table" .Tiers}}
<h3>Placements</h3>
{{template "table" .Placements}}
<h3>Workload and run matrix</h3>
{{template "table" .Matrix}}
{{if .Source}}<details><summary>Study file as given</summary><pre>{{.Source}}</pre></details>{{end}}
</section>

<section id="charts">
<h2>Charts</h2>
{{range .Sections}}<h3 id="{{.ID}}">{{.Heading}}</h3>
<p class="note">{{.Intro}}</p>
{{if .Notes}}<ul class="note">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{range .Charts}}<figure>{{.Inline}}{{if .Notes}}<figcaption><ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul></figcaption>{{end}}</figure>
{{end}}{{end}}
</section>

<section id="results">
<h2>Results</h2>
<h3>Per group</h3>
<p class="note">One row per placement x durability x clients cell; p50 and p99 are the medians of the runs' own percentiles. {{.Method}} Click a header to sort.</p>
{{template "table" .Groups}}
<h3>Every run</h3>
<p class="note">One row per run; latency percentiles are each run's own, from its measured window. Open a row's details for its CPU, cache, bottleneck and error. Click a header to sort.</p>
<div id="runs">{{template "table" .Runs}}</div>
</section>
</main>
<script>
(function () {
  function key(td) {
    var v = td.getAttribute('data-sort');
    if (v === null) { v = td.textContent; }
    if (v === '') { return -Infinity; }
    var n = Number(v);
    return isNaN(n) ? v.toLowerCase() : n;
  }
  function compare(a, b) {
    if (typeof a === 'number' && typeof b === 'number') { return a < b ? -1 : a > b ? 1 : 0; }
    return String(a).localeCompare(String(b));
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var heads = table.querySelectorAll('th:not(.more)');
    heads.forEach(function (th, col) {
      th.tabIndex = 0;
      function sortBy() {
        var asc = th.getAttribute('aria-sort') !== 'ascending';
        heads.forEach(function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (x, y) {
          var r = compare(key(x.cells[col]), key(y.cells[col]));
          return asc ? r : -r;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      }
      th.addEventListener('click', sortBy);
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortBy(); }
      });
    });
  });
})();
</script>
</body>
</html>
{{define "table"}}<div class="scroll"><table{{if .Sortable}} class="sortable"{{else if .Fit}} class="fit"{{end}}>
{{if .Header}}<thead><tr>{{range $i, $h := .Header}}<th{{if index $.Num $i}} class="num"{{end}}>{{$h}}</th>{{end}}{{if .Details}}<th class="more">{{.Details}}</th>{{end}}</tr></thead>{{end}}
<tbody>
{{range .Rows}}<tr{{if .Class}} class="{{.Class}}"{{end}}>{{range $i, $c := .Cells}}<td{{if $c.Sort}} data-sort="{{$c.Sort}}"{{end}}{{if index $.Num $i}} class="num"{{end}}{{if and $.Fit $.Header}} data-label="{{index $.Header $i}}"{{end}}>{{$c.Text}}</td>{{end}}{{if $.Details}}<td class="more">{{if .Details}}<details><summary>{{.More}}</summary><dl>{{range .Details}}{{if and .V (ne .V "-")}}<dt>{{.K}}</dt><dd>{{.V}}</dd>{{end}}{{end}}</dl></details>{{end}}</td>{{end}}</tr>
{{end}}</tbody></table></div>{{end}}`
