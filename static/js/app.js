// Small progressive enhancements; every page works without JavaScript.
(function () {
  "use strict";

  function typing(event) {
    const t = event.target;
    return t && (t.tagName === "TEXTAREA" || (t.tagName === "INPUT" && t.type === "text") || t.isContentEditable);
  }

  // Item editor: Ctrl/Cmd+S saves the revision.
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === "s") {
      const editor = document.getElementById("item-editor");
      if (editor) { event.preventDefault(); editor.requestSubmit(); }
    }
  });

  // Decision keys shared by the review and adjudication forms.
  function decide(form, value) {
    const input = form.querySelector(`input[name=decision][value=${value}]`);
    if (input) { input.checked = true; input.dispatchEvent(new Event("change", { bubbles: true })); }
  }

  // Screening review: every action has a key.
  function setupReview(form) {
    const criteria = Array.from(form.querySelectorAll(".criterion"));
    let current = 0;
    function focusCriterion(i) {
      if (!criteria.length) return;
      current = Math.max(0, Math.min(criteria.length - 1, i));
      criteria.forEach((c, j) => c.classList.toggle("focused", j === current));
      criteria[current].focus({ preventScroll: false });
    }
    function choose(value) {
      const c = criteria[current];
      if (!c) return;
      const input = c.querySelector(`input[value="${value}"]`);
      if (input) {
        input.checked = true;
        input.dispatchEvent(new Event("change", { bubbles: true }));
        if (current < criteria.length - 1) focusCriterion(current + 1);
      }
    }
    criteria.forEach((c, i) => c.addEventListener("click", () => focusCriterion(i)));
    focusCriterion(0);
    document.addEventListener("keydown", (event) => {
      if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
        event.preventDefault();
        form.requestSubmit(document.getElementById("submit-review"));
        return;
      }
      if (typing(event) || event.ctrlKey || event.metaKey || event.altKey) {
        if (event.key === "Escape") event.target.blur();
        return;
      }
      const key = event.key.toLowerCase();
      if (key === "j" || event.key === "ArrowDown") { event.preventDefault(); focusCriterion(current + 1); }
      else if (key === "k" || event.key === "ArrowUp") { event.preventDefault(); focusCriterion(current - 1); }
      else if ("12345".includes(key) && key.length === 1) { event.preventDefault(); choose(key); }
      else if (key === "p") { event.preventDefault(); choose("pass"); }
      else if (key === "f") { event.preventDefault(); choose("fail"); }
      else if (key === "a") { event.preventDefault(); decide(form, "accept"); }
      else if (key === "r") { event.preventDefault(); decide(form, "revise"); }
      else if (key === "x") { event.preventDefault(); decide(form, "reject"); }
      else if (key === "c") { event.preventDefault(); document.getElementById("comment").focus(); }
    });
  }

  function setupAdjudication(form) {
    document.addEventListener("keydown", (event) => {
      if ((event.ctrlKey || event.metaKey) && event.key === "Enter") { event.preventDefault(); form.requestSubmit(); return; }
      if (typing(event) || event.ctrlKey || event.metaKey || event.altKey) return;
      const key = event.key.toLowerCase();
      if (key === "a") decide(form, "accept");
      else if (key === "r") decide(form, "revise");
      else if (key === "x") decide(form, "reject");
      else if (key === "n") { event.preventDefault(); document.getElementById("note").focus(); }
    });
  }

  // Pairwise labelling: arrows pick a side, T a tie, digits the margin, Enter submits.
  function setupLabel(form) {
    function pick(id) {
      const input = document.getElementById(id);
      if (input) { input.checked = true; input.dispatchEvent(new Event("change", { bubbles: true })); }
    }
    function syncMargins() {
      const tie = document.getElementById("winner-tie").checked;
      form.querySelectorAll("input[name=margin]").forEach((m) => { m.disabled = tie; if (tie) m.checked = false; });
    }
    form.addEventListener("change", syncMargins);
    document.addEventListener("keydown", (event) => {
      if (typing(event) || event.ctrlKey || event.metaKey || event.altKey) {
        if (event.key === "Escape") event.target.blur();
        if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); form.requestSubmit(); }
        return;
      }
      const key = event.key.toLowerCase();
      if (event.key === "ArrowLeft") { event.preventDefault(); pick("winner-left"); }
      else if (event.key === "ArrowRight") { event.preventDefault(); pick("winner-right"); }
      else if (key === "t") { event.preventDefault(); pick("winner-tie"); }
      else if ("12345".includes(key) && key.length === 1) { event.preventDefault(); pick(`margin-${key}`); }
      else if (key === "r") { event.preventDefault(); document.getElementById("rationale").focus(); }
      else if (event.key === "Enter") { event.preventDefault(); form.requestSubmit(); }
    });
    syncMargins();
  }

  // No inline handlers or style attributes (the Content-Security-Policy forbids them): a select marked
  // data-autosubmit submits its form on change, and a progress bar's width comes from data-percent.
  document.addEventListener("change", (event) => {
    const t = event.target;
    if (t && t.matches && t.matches("select[data-autosubmit]") && t.form) t.form.submit();
  });
  function widths(root) {
    root.querySelectorAll("[data-percent]").forEach((bar) => {
      const value = Math.max(0, Math.min(100, parseFloat(bar.dataset.percent) || 0));
      bar.style.width = `${value}%`;
    });
  }
  document.addEventListener("htmx:load", (event) => widths(event.target));

  document.addEventListener("DOMContentLoaded", () => {
    widths(document);
    const label = document.getElementById("label-form");
    if (label) setupLabel(label);
    const review = document.getElementById("review-form");
    if (review) setupReview(review);
    const adjudication = document.getElementById("adjudication-form");
    if (adjudication) setupAdjudication(adjudication);
  });
})();
