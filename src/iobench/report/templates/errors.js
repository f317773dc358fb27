// Errors in the page are shown in it (and read by the tests) instead of passing unseen.
(function () {
  "use strict";
  function report(message) {
    var box = document.getElementById("js-errors");
    if (!box) {
      return;
    }
    var item = document.createElement("li");
    item.textContent = String(message);
    box.appendChild(item);
    box.hidden = false;
  }
  window.iobenchReportError = report;
  window.addEventListener("error", function (event) {
    report("error: " + event.message + " (line " + event.lineno + ")");
  });
  window.addEventListener("unhandledrejection", function (event) {
    report("error: " + event.reason);
  });
  var consoleError = console.error;
  console.error = function () {
    report("console.error: " + Array.prototype.join.call(arguments, " "));
    consoleError.apply(console, arguments);
  };
})();
