// Sorting and filtering of the tasks table. The page is complete without this script.
(function () {
  "use strict";
  var table = document.getElementById("tasks");
  if (!table) { return; }
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  function cellValue(row, index) {
    var cell = row.cells[index];
    var v = cell.getAttribute("data-v");
    return v === null ? cell.textContent : v;
  }
  function sortBy(index) {
    var head = heads[index];
    var descending = head.getAttribute("aria-sort") === "ascending";
    for (var i = 0; i < heads.length; i++) { heads[i].removeAttribute("aria-sort"); }
    head.setAttribute("aria-sort", descending ? "descending" : "ascending");
    var numeric = head.getAttribute("data-type") === "num";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, index), y = cellValue(b, index), r;
      if (numeric) { r = (parseFloat(x) || 0) - (parseFloat(y) || 0); } else { r = x.localeCompare(y); }
      return descending ? -r : r;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  Array.prototype.forEach.call(heads, function (head, index) {
    head.addEventListener("click", function () { sortBy(index); });
    head.setAttribute("title", "click to sort");
  });
  var status = document.getElementById("f-status");
  var minScore = document.getElementById("f-min");
  var maxScore = document.getElementById("f-max");
  var text = document.getElementById("f-text");
  var shown = document.getElementById("f-shown");
  function applyFilter() {
    var want = status.value, lo = parseFloat(minScore.value), hi = parseFloat(maxScore.value);
    var needle = text.value.toLowerCase(), count = 0;
    Array.prototype.forEach.call(body.rows, function (row) {
      var score = parseFloat(row.getAttribute("data-score"));
      var ok = (!want || row.getAttribute("data-status") === want)
        && (isNaN(lo) || (!isNaN(score) && score >= lo))
        && (isNaN(hi) || (!isNaN(score) && score <= hi))
        && (!needle || row.textContent.toLowerCase().indexOf(needle) >= 0);
      row.hidden = !ok;
      if (ok) { count++; }
    });
    shown.textContent = count + " of " + body.rows.length + " shown";
  }
  [status, minScore, maxScore, text].forEach(function (el) {
    el.addEventListener("input", applyFilter);
    el.addEventListener("change", applyFilter);
  });
  document.getElementById("filters").hidden = false;
  applyFilter();
})();
