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
