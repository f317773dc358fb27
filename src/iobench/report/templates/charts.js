// Draw every chart from its JSON block.
(function () {
  "use strict";
  var report = window.iobenchReportError;
  if (typeof Plotly === "undefined") {
    report("plotly.js did not load: the charts cannot be drawn");
    return;
  }
  var config = JSON.parse(document.getElementById("plotly-config").textContent);
  var divs = document.querySelectorAll("div.chart[data-figure]");
  Array.prototype.forEach.call(divs, function (div) {
    try {
      var block = document.getElementById(div.getAttribute("data-figure"));
      var figure = JSON.parse(block.textContent);
      Plotly.newPlot(div, figure.data, figure.layout, config).catch(function (e) {
        report("chart " + div.id + ": " + e);
      });
    } catch (e) {
      report("chart " + div.id + ": " + e);
    }
  });
})();
// A link to a finding folded away opens its fold; printing opens every fold, and the charts
// fit the paper (and the screen again after).
(function () {
  "use strict";
  function reveal() {
    var target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") {
        node.open = true;
      }
    }
    if (target) {
      target.scrollIntoView();
    }
  }
  window.addEventListener("hashchange", reveal);
  if (location.hash) {
    reveal();
  }
  function resize() {
    if (typeof Plotly === "undefined") {
      return;
    }
    Array.prototype.forEach.call(document.querySelectorAll("div.chart.js-plotly-plot"), function (div) {
      Plotly.Plots.resize(div);
    });
  }
  window.addEventListener("beforeprint", function () {
    Array.prototype.forEach.call(document.querySelectorAll("details"), function (d) {
      d.open = true;
    });
    resize();
  });
  window.addEventListener("afterprint", resize);
})();
