// The explorer page: load a bundled test, run it on the local server, show the answer.
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var editor = $("editor"), gutter = $("gutter"), backdrop = $("backdrop");
  var uploaded = null; // {name, text} of an uploaded .cat model
  var errorLines = {};

  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  function paintEditor() {
    var lines = editor.value.split("\n");
    var g = [], b = [];
    for (var i = 0; i < lines.length; i++) {
      var n = i + 1, msg = errorLines[n];
      g.push(msg ? '<span class="err" title="' + esc(msg) + '">' + n + "</span>" : String(n));
      b.push(msg ? '<span class="err">' + esc(lines[i] || " ") + "</span>" : esc(lines[i]));
    }
    gutter.innerHTML = g.join("\n") + "\n";
    backdrop.innerHTML = b.join("\n") + "\n";
    syncScroll();
  }

  function syncScroll() {
    gutter.scrollTop = editor.scrollTop;
    backdrop.scrollTop = editor.scrollTop;
    backdrop.scrollLeft = editor.scrollLeft;
  }

  function goToLine(line) {
    var lines = editor.value.split("\n"), pos = 0;
    for (var i = 0; i < line - 1 && i < lines.length; i++) pos += lines[i].length + 1;
    editor.focus();
    editor.setSelectionRange(pos, pos + (lines[line - 1] || "").length);
  }

  function clearResult() {
    ["summary", "states", "flags", "graphs", "diagnostics"].forEach(function (id) {
      $(id).innerHTML = "";
    });
    $("graphs-title").hidden = true;
    $("explanation-box").hidden = true;
    $("result-box").hidden = true;
    errorLines = {};
    paintEditor();
  }

  function showDiagnostics(list, cls) {
    var box = $("diagnostics");
    list.forEach(function (d) {
      var div = document.createElement("div");
      div.className = "diag " + (cls || "");
      div.textContent = d.text;
      if (d.line && d.in_editor) {
        errorLines[d.line] = d.message || d.text;
        div.dataset.line = d.line;
        div.title = "go to line " + d.line;
        div.addEventListener("click", function () { goToLine(d.line); });
      }
      box.appendChild(div);
    });
    paintEditor();
  }

  function showResult(r) {
    $("status").innerHTML = "<b>" + esc(r.name) + "</b> under <b>" + esc(r.model) +
      "</b> (" + esc(r.engine) + "): " + '<span class="verdict ' + esc(r.verdict) + '">' +
      esc(r.verdict) + "</span> &middot; the condition's outcome is <b>" + esc(r.answer) + "</b>";
    $("states").innerHTML = "<h2>States (" + r.states.length + ")</h2><ul>" +
      r.states.map(function (s) { return "<li>" + esc(s) + "</li>"; }).join("") + "</ul>";
    $("flags").innerHTML = r.flags.length ?
      "<h2>Flags</h2><ul>" + r.flags.map(function (f) {
        return "<li><b>" + esc(f.name) + "</b>: " + esc(f.description) + "</li>";
      }).join("") + "</ul>" : "<p>No flag raised.</p>";
    $("graphs-title").hidden = r.graphs.length === 0;
    var gbox = $("graphs");
    r.graphs.forEach(function (g) {
      var div = document.createElement("div");
      div.className = "graph";
      var cap = document.createElement("div");
      cap.className = "caption";
      cap.textContent = g.caption;
      div.appendChild(cap);
      if (g.svg) {
        var holder = document.createElement("div");
        holder.innerHTML = g.svg.slice(g.svg.indexOf("<svg"));
        div.appendChild(holder);
      } else {
        var pre = document.createElement("pre");
        pre.textContent = "Graphviz is not installed on the server: the graph as DOT\n" + g.dot;
        div.appendChild(pre);
      }
      gbox.appendChild(div);
    });
    if (r.graphs_truncated) {
      var more = document.createElement("p");
      more.className = "note";
      more.textContent = "More allowed final states exist than are drawn here.";
      gbox.appendChild(more);
    }
    $("explanation").textContent = r.explanation;
    $("explanation-box").hidden = false;
    $("result").textContent = r.result;
    $("result-box").hidden = false;
    if (r.warnings.length) {
      showDiagnostics(r.warnings.map(function (w) { return {text: w}; }), "warn");
    }
  }

  function run() {
    clearResult();
    $("run").disabled = true;
    $("status").textContent = "Running…";
    var body = {test: editor.value};
    if (uploaded) { body.model = uploaded.name; body.model_text = uploaded.text; }
    else { body.model = $("model-select").value; }
    fetch("/api/run", {method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify(body)})
      .then(function (resp) { return resp.json(); })
      .then(function (r) {
        if (r.ok) { showResult(r); return; }
        $("status").innerHTML = '<span class="verdict No">error</span> the test or the model ' +
          "is not accepted:";
        showDiagnostics(r.diagnostics);
      })
      .catch(function (e) { $("status").textContent = "The server did not answer: " + e; })
      .finally(function () { $("run").disabled = false; });
  }

  function loadTest(name) {
    if (!name) return;
    fetch("/api/test?name=" + encodeURIComponent(name))
      .then(function (resp) { return resp.json(); })
      .then(function (r) {
        if (r.text !== undefined) { editor.value = r.text; clearResult(); }
      });
  }

  editor.addEventListener("input", function () { errorLines = {}; paintEditor(); });
  editor.addEventListener("scroll", syncScroll);
  $("run").addEventListener("click", run);
  $("test-select").addEventListener("change", function () { loadTest(this.value); });
  $("model-select").addEventListener("change", function () {
    uploaded = null; $("model-file").value = ""; $("model-note").textContent = "";
  });
  $("model-file").addEventListener("change", function () {
    var file = this.files[0];
    if (!file) { uploaded = null; return; }
    file.text().then(function (text) {
      uploaded = {name: file.name, text: text};
      $("model-note").textContent = "Using the uploaded model " + file.name +
        " (it may include the shipped models only).";
    });
  });

  fetch("/api/models").then(function (r) { return r.json(); }).then(function (m) {
    m.models.forEach(function (name) {
      var o = document.createElement("option");
      o.value = o.textContent = name;
      if (name === m.default) o.selected = true;
      $("model-select").appendChild(o);
    });
  });
  fetch("/api/tests").then(function (r) { return r.json(); }).then(function (t) {
    var sel = $("test-select");
    t.tests.forEach(function (name) {
      var o = document.createElement("option");
      o.value = o.textContent = name;
      if (name === t.default) o.selected = true;
      sel.appendChild(o);
    });
    if (t.default) loadTest(t.default);
    else if (t.tests.length) loadTest(t.tests[0]);
    else paintEditor();
  });
})();
