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

  // A text field focused by its key: the caret goes after what is already written, so typing appends.
  function focusAtEnd(field) {
    if (!field) return;
    field.focus();
    const end = field.value.length;
    field.setSelectionRange(end, end);
  }

  // Keys shared by the review and label pages: S puts the item aside, B (or U, to undo the last one) opens the
  // previous one to change it, ? shows the list of keys.
  function queueKey(event, key) {
    if (key === "s") {
      if (document.getElementById("skip-form") || queueFlow.pending) {
        event.preventDefault();
        afterSent(() => { const skip = document.getElementById("skip-form"); if (skip) skip.requestSubmit(); });
      }
    } else if (key === "b" || key === "u") {
      if (document.querySelector("[data-queue-back]") || queueFlow.pending) {
        event.preventDefault();
        afterSent(() => {
          const back = document.querySelector("[data-queue-back]");
          if (back) window.location.assign(back.href);
        });
      }
    } else if (event.key === "?") {
      const help = document.getElementById("shortcuts");
      if (help && typeof help.showModal === "function") {
        event.preventDefault();
        if (help.open) help.close(); else help.showModal();
      }
    }
  }

  // An autosave that a delay scheduled must not fire once its form is submitted (it would answer 400, the item
  // being submitted already): a submitted form cancels its pending htmx requests.
  document.addEventListener("submit", (event) => { event.target.dataset.submitted = "1"; });
  document.addEventListener("htmx:beforeRequest", (event) => {
    const elt = event.detail && event.detail.elt;
    const form = elt && (elt.tagName === "FORM" ? elt : elt.closest && elt.closest("form"));
    if (form && form.dataset.submitted) event.preventDefault();
  });
  document.addEventListener("click", (event) => {
    const close = event.target.closest && event.target.closest("[data-close-dialog]");
    if (close) close.closest("dialog").close();
    const open = event.target.closest && event.target.closest("[data-open-dialog]");
    const dialog = open && document.getElementById(open.dataset.openDialog);
    if (dialog && typeof dialog.showModal === "function") dialog.showModal();
  });

  // Decision keys shared by the review and adjudication forms.
  function decide(form, value) {
    const input = form.querySelector(`input[name=decision][value=${value}]`);
    if (input) { input.checked = true; input.dispatchEvent(new Event("change", { bubbles: true })); }
  }

  // Screening review: every action has a key. One listener for every item the page shows in turn (queueFlow below
  // swaps them in): it reads the form shown now, which keeps the criterion in focus.
  function reviewCriteria(form) { return Array.from(form.querySelectorAll(".criterion")); }
  function focusCriterion(form, i) {
    const criteria = reviewCriteria(form);
    if (!criteria.length) return;
    const current = Math.max(0, Math.min(criteria.length - 1, i));
    form.dataset.criterion = String(current);
    criteria.forEach((c, j) => c.classList.toggle("focused", j === current));
    criteria[current].focus({ preventScroll: false });
  }
  function scoreCriterion(form, value) {
    const current = Number(form.dataset.criterion || 0);
    const c = reviewCriteria(form)[current];
    const input = c && c.querySelector(`input[value="${value}"]`);
    if (input) {
      input.checked = true;
      input.dispatchEvent(new Event("change", { bubbles: true }));
      focusCriterion(form, current + 1);
    }
  }
  function bindReviewForm(form) {
    reviewCriteria(form).forEach((c, i) => c.addEventListener("click", () => focusCriterion(form, i)));
    focusCriterion(form, 0);
  }
  function reviewComplete(form) {
    const scored = reviewCriteria(form).every((c) => c.querySelector("input:checked"));
    const decision = form.querySelector("input[name=decision]:checked");
    const comment = form.querySelector("textarea[name=comment]");
    return Boolean(scored && decision && (decision.value === "accept" || (comment && comment.value.trim())));
  }
  function setupReviewKeys() {
    document.addEventListener("keydown", (event) => {
      const form = document.getElementById("review-form");
      if (!form) return;
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
      const current = Number(form.dataset.criterion || 0);
      if (key === "j" || event.key === "ArrowDown") { event.preventDefault(); focusCriterion(form, current + 1); }
      else if (key === "k" || event.key === "ArrowUp") { event.preventDefault(); focusCriterion(form, current - 1); }
      else if ("12345".includes(key) && key.length === 1) { event.preventDefault(); scoreCriterion(form, key); }
      else if (key === "p") { event.preventDefault(); scoreCriterion(form, "pass"); }
      else if (key === "f") { event.preventDefault(); scoreCriterion(form, "fail"); }
      else if (key === "a") { event.preventDefault(); decide(form, "accept"); }
      else if (key === "r") { event.preventDefault(); decide(form, "revise"); }
      else if (key === "x") { event.preventDefault(); decide(form, "reject"); }
      else if (key === "c") { event.preventDefault(); focusAtEnd(document.getElementById("comment")); }
      else queueKey(event, key);
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

  // Pairwise labelling: arrows pick a side, T a tie, digits the margin, Enter submits. One listener for every
  // comparison the page shows in turn (queueFlow below swaps them in): it reads the form shown now.
  function pick(id) {
    const input = document.getElementById(id);
    if (input) { input.checked = true; input.dispatchEvent(new Event("change", { bubbles: true })); }
  }
  function syncMargins(form) {
    const tie = form.querySelector("#winner-tie");
    form.querySelectorAll("input[name=margin]").forEach((m) => { m.disabled = tie.checked; if (tie.checked) m.checked = false; });
  }
  function bindLabelForm(form) {
    form.addEventListener("change", () => syncMargins(form));
    syncMargins(form);
  }
  function labelComplete(form) {
    const winner = form.querySelector("input[name=winner]:checked");
    return Boolean(winner && (winner.value === "tie" || form.querySelector("input[name=margin]:checked")));
  }
  function setupLabelKeys() {
    document.addEventListener("keydown", (event) => {
      const form = document.getElementById("label-form");
      if (!form) return;
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
      else if (key === "r") { event.preventDefault(); focusAtEnd(document.getElementById("rationale")); }
      else if (event.key === "Enter") { event.preventDefault(); form.requestSubmit(); }
      else queueKey(event, key);
    });
  }

  // The label and review pages at the expert's pace (one flow for both; the page's data-queue-page says which
  // keys, form binding and completeness apply). The next item's page is fetched ahead (sent with "Purpose:
  // prefetch", so its clock does not start); submitting a complete form shows it at once, in the same document,
  // while the form is posted in the background. The server's answer is the page it redirects to (the item now
  // shown, timed from that request) or the submitted item again with its error: the first refreshes the queue
  // parts of the page shown (progress, back link, put-aside list, messages) and fetches the one after; the second
  // takes the expert back to what they submitted, as does a failed connection (the page as they left it). Without
  // a page ahead (the last item, an incomplete form) the form is submitted as before.
  const queueFlow = { ahead: null, aheadUrl: "", pending: null };
  const queueKinds = {
    label: { keys: setupLabelKeys, bind: bindLabelForm, complete: labelComplete },
    review: { keys: setupReviewKeys, bind: bindReviewForm, complete: reviewComplete },
  };

  function queuePage(root) { return (root || document).querySelector("[data-queue-page]"); }
  function queueForm() { return document.querySelector("form[data-queue-form]"); }
  function queueMain() { return document.querySelector("main.page"); }
  function parsePage(html) { return new DOMParser().parseFromString(html, "text/html"); }

  function fetchAhead() {
    const page = queuePage();
    const url = (page && page.dataset.nextUrl) || "";
    if (url === queueFlow.aheadUrl && queueFlow.ahead) return;
    queueFlow.aheadUrl = url;
    queueFlow.ahead = !url ? null : fetch(url, { headers: { Purpose: "prefetch" }, credentials: "same-origin" })
      .then(async (response) => {
        if (!response.ok || response.redirected) return null;
        const doc = parsePage(await response.text());
        return queuePage(doc) && doc.querySelector("main.page") ? { url: response.url, doc } : null;
      })
      .catch(() => null);
  }

  // Bind the item shown; fetch the one after it only once the page's queue parts are the server's (a page shown
  // from ahead was rendered before the form submitted on the last one was stored).
  function bindQueuePage(settled) {
    const main = queueMain();
    widths(main);
    if (window.htmx) window.htmx.process(main);
    const form = queueForm();
    if (form && !form.dataset.bound) {
      form.dataset.bound = "1";
      queueKinds[queuePage().dataset.queuePage].bind(form);
    }
    if (settled) fetchAhead();
  }

  function showPage(doc, settled) {
    queueMain().replaceChildren(...Array.from(doc.querySelector("main.page").childNodes));
    document.title = doc.title;
    window.scrollTo(0, 0);
    bindQueuePage(settled);
  }

  // The item shown was rendered before the form was stored: count the item and link back to it now.
  function countSubmitted(fromUrl) {
    const progress = document.querySelector("[data-queue-progress]");
    if (progress) {
      const done = Number(progress.dataset.done) + 1;
      const total = Number(progress.dataset.total);
      progress.dataset.done = String(done);
      document.getElementById("progress-text").textContent = `${done} / ${total}`;
      const bar = progress.querySelector("[data-percent]");
      if (bar) { bar.dataset.percent = String(total ? Math.floor((100 * done) / total) : 0); widths(progress); }
    }
    const back = document.querySelector("[data-queue-back]");
    if (back) back.href = fromUrl;
  }

  function showMessage(text, kind) {
    const list = document.createElement("ul");
    list.className = "messages";
    const item = document.createElement("li");
    item.className = `msg-${kind}`;
    item.textContent = text;
    list.append(item);
    const old = queueMain().querySelector(":scope > ul.messages");
    if (old) old.replaceWith(list); else queueMain().prepend(list);
  }

  // The server's page for the item already shown: take its queue parts, keep what the expert has chosen.
  function refreshQueueParts(doc) {
    const fresh = doc.querySelector("main.page");
    doc.querySelectorAll("[data-queue-part]").forEach((next) => {
      const now = document.getElementById(next.id);
      if (now) now.replaceWith(next);
    });
    const messages = fresh.querySelector(":scope > ul.messages");
    const old = queueMain().querySelector(":scope > ul.messages");
    if (messages && old) old.replaceWith(messages);
    else if (messages) queueMain().prepend(messages);
    else if (old) old.remove();
    queuePage().dataset.nextUrl = queuePage(doc).dataset.nextUrl;
    bindQueuePage(true);
  }

  async function queueSend(action, data, left) {
    const main = queueMain();
    main.setAttribute("aria-busy", "true");
    let response = null;
    let doc = null;
    try {
      response = await fetch(action, { method: "POST", body: data, credentials: "same-origin" });
      doc = parsePage(await response.text());
    } catch (error) {
      response = null;
    }
    main.removeAttribute("aria-busy");
    const page = doc && queuePage(doc);
    const shown = queuePage();
    if (response && response.ok && page && shown && page.dataset.url === shown.dataset.url
        && page.dataset.finished === shown.dataset.finished) {
      refreshQueueParts(doc);
    } else if (response && page) {
      // Another item than the one shown, or the submitted one again with its error (400, 409).
      showPage(doc, true);
      history.replaceState(null, "", page.dataset.url);
    } else if (response && response.ok && response.redirected && !doc.querySelector("form[data-queue-form]")) {
      window.location.assign(response.url); // the queue is done: the page the server sends the expert to
    } else {
      queueMain().replaceChildren(...left.nodes);
      document.title = left.title;
      history.replaceState(null, "", left.url);
      const form = queueForm();
      if (form) delete form.dataset.submitted; // not sent: its autosave may run again
      showMessage(queuePage().dataset.unsent, "error");
      window.scrollTo(0, 0);
      bindQueuePage(true);
    }
  }

  async function queueSubmit(form) {
    const page = queuePage();
    const kind = queueKinds[page.dataset.queuePage];
    const item = page.dataset.url;
    if (queueFlow.pending) await queueFlow.pending; // the one before first: its answer may bring the expert back
    const current = queuePage();
    if (!current || current.dataset.url !== item) return;
    form = queueForm();
    const ahead = kind.complete(form) ? await queueFlow.ahead : null;
    if (!ahead || queuePage() !== current) {
      if (queuePage() === current) form.submit();
      return;
    }
    const left = { nodes: Array.from(queueMain().childNodes), url: window.location.href, title: document.title };
    const data = new FormData(form);
    const action = form.action;
    const changing = Boolean(form.querySelector("input[name=change]"));
    const changed = current.dataset.changed;
    queueFlow.ahead = null;
    queueFlow.aheadUrl = "";
    history.pushState({ queue: true }, "", ahead.url);
    showPage(ahead.doc, false);
    if (changing) showMessage(changed, "success"); else countSubmitted(left.url);
    queueFlow.pending = queueSend(action, data, left).finally(() => { queueFlow.pending = null; });
  }

  function setupQueueFlow(page) {
    queueKinds[page.dataset.queuePage].keys();
    document.addEventListener("submit", (event) => {
      const form = event.target;
      if (event.defaultPrevented || !form.matches("form[data-queue-form]") || !queuePage()) return;
      event.preventDefault();
      if (form.dataset.sending) return;
      form.dataset.sending = "1";
      queueSubmit(form).finally(() => { delete form.dataset.sending; });
    });
    // Back and forward through items shown in place: load the page of the address reached.
    window.addEventListener("popstate", () => { if (queuePage()) window.location.reload(); });
    bindQueuePage(true);
  }

  // Keys that leave the item (skip, back) wait for the form being sent: its answer brings the right links.
  function afterSent(then) {
    if (queueFlow.pending) queueFlow.pending.then(then); else then();
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


  // Searchable pickers. A select marked data-picker becomes a search box over its options, its choices shown as
  // removable chips; a text input marked data-picker-remote (space-separated uids) searches the items API. The
  // original field stays in the form, hidden, and is what is submitted: without JavaScript it is a plain field.
  // Nothing here sets inline style attributes or handlers (the Content-Security-Policy forbids them).
  let pickers = 0;
  function pickerShell(field) {
    const n = ++pickers;
    const box = document.createElement("div");
    box.className = "picker";
    const chips = document.createElement("ul");
    chips.className = "picker-chips";
    const input = document.createElement("input");
    input.type = "text";
    input.className = "picker-input";
    input.id = `${field.id || "picker-" + n}-search`;
    input.autocomplete = "off";
    input.placeholder = field.dataset.placeholder || "";
    input.setAttribute("role", "combobox");
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-expanded", "false");
    const list = document.createElement("ul");
    list.className = "picker-list";
    list.id = `picker-${n}-list`;
    list.setAttribute("role", "listbox");
    list.hidden = true;
    input.setAttribute("aria-controls", list.id);
    box.append(chips, input, list);
    // Inside a wrapping <label>, a click on a chip or option would also "click" the label's first control (a
    // chip's remove button): cancel that default, which leaves the picker's own click handlers running.
    if (field.closest("label")) box.addEventListener("click", (event) => { if (event.target !== input) event.preventDefault(); });
    field.classList.add("picker-source");
    field.parentNode.insertBefore(box, field);
    if (field.id) {
      document.querySelectorAll(`label[for="${field.id}"]`).forEach((label) => { label.htmlFor = input.id; });
    }
    return { box, chips, input, list };
  }

  function chip(text, removeLabel, onRemove) {
    const li = document.createElement("li");
    li.className = "picker-chip";
    li.textContent = text;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "picker-remove";
    button.textContent = "×";
    button.setAttribute("aria-label", `${removeLabel} ${text}`);
    button.addEventListener("click", onRemove);
    li.append(button);
    return li;
  }

  // Shared list behaviour: rows are {label, detail, selected, choose}; arrows move, Enter chooses, Escape closes.
  function pickerList(ui, field, rowsFor) {
    let rows = [];
    let active = -1;
    function close() {
      ui.list.hidden = true;
      ui.input.setAttribute("aria-expanded", "false");
      ui.input.removeAttribute("aria-activedescendant");
    }
    function paint() {
      ui.list.replaceChildren();
      rows.forEach((row, i) => {
        const li = document.createElement("li");
        li.id = `${ui.list.id}-${i}`;
        li.className = "picker-option" + (i === active ? " active" : "") + (row.selected ? " selected" : "");
        li.setAttribute("role", "option");
        li.setAttribute("aria-selected", row.selected ? "true" : "false");
        li.textContent = row.label;
        if (row.detail) {
          const small = document.createElement("span");
          small.className = "muted";
          small.textContent = ` ${row.detail}`;
          li.append(small);
        }
        li.addEventListener("mousedown", (event) => event.preventDefault());
        li.addEventListener("click", () => { row.choose(); refresh(); ui.input.focus(); });
        ui.list.append(li);
      });
      if (!rows.length) {
        const li = document.createElement("li");
        li.className = "picker-empty muted";
        li.textContent = field.dataset.emptyLabel || "—";
        ui.list.append(li);
      }
      if (active >= 0) {
        ui.input.setAttribute("aria-activedescendant", `${ui.list.id}-${active}`);
        const current = ui.list.children[active];
        if (current && current.scrollIntoView) current.scrollIntoView({ block: "nearest" });
      }
    }
    let generation = 0;
    async function refresh() {
      // Answers can come back out of order (a search of the server): only the latest query's rows are shown.
      const mine = ++generation;
      const found = await rowsFor(ui.input.value.trim());
      if (mine !== generation) return;
      rows = found;
      active = Math.min(active, rows.length - 1);
      ui.list.hidden = false;
      ui.input.setAttribute("aria-expanded", "true");
      paint();
    }
    ui.input.addEventListener("focus", refresh);
    ui.input.addEventListener("input", () => { active = 0; refresh(); });
    ui.input.addEventListener("blur", close);
    ui.input.addEventListener("keydown", (event) => {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        if (ui.list.hidden) { refresh(); return; }
        const step = event.key === "ArrowDown" ? 1 : -1;
        active = rows.length ? (active + step + rows.length) % rows.length : -1;
        paint();
      } else if (event.key === "Enter") {
        event.preventDefault();
        if (!ui.list.hidden && rows[active]) { rows[active].choose(); refresh(); }
      } else if (event.key === "Escape") {
        close();
      } else if (event.key === "Backspace" && !ui.input.value) {
        const buttons = ui.chips.querySelectorAll(".picker-remove");
        if (buttons.length) buttons[buttons.length - 1].click();
      }
    });
    return { refresh, close };
  }

  function changed(field) {
    field.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function setupSelectPicker(select) {
    if (select.dataset.pickerReady) return;
    select.dataset.pickerReady = "1";
    const ui = pickerShell(select);
    const removeLabel = select.dataset.removeLabel || "Remove";
    const options = () => Array.from(select.options).filter((o) => o.value !== "");
    function paintChips() {
      ui.chips.replaceChildren(...options().filter((o) => o.selected).map((o) => chip(o.text, removeLabel, () => {
        o.selected = false;
        if (!select.multiple) select.value = "";
        changed(select);
        paintChips();
        ui.input.focus();
      })));
    }
    function choose(option) {
      if (select.multiple) {
        option.selected = !option.selected;
      } else {
        select.value = option.selected ? "" : option.value;
        ui.input.value = "";
      }
      changed(select);
      paintChips();
    }
    pickerList(ui, select, async (query) => {
      const words = query.toLowerCase().split(/\s+/).filter(Boolean);
      return options()
        .filter((o) => {
          const haystack = `${o.text} ${o.dataset.search || ""}`.toLowerCase();
          return words.every((w) => haystack.includes(w));
        })
        .map((o) => ({ label: o.text, selected: o.selected, choose: () => choose(o) }));
    });
    paintChips();
  }

  function setupRemotePicker(field) {
    if (field.dataset.pickerReady) return;
    field.dataset.pickerReady = "1";
    const ui = pickerShell(field);
    const removeLabel = field.dataset.removeLabel || "Remove";
    const chosen = () => field.value.split(/[\s,]+/).filter(Boolean);
    function store(uids) {
      field.value = uids.join(" ");
      changed(field);
      paintChips();
    }
    function paintChips() {
      ui.chips.replaceChildren(...chosen().map((uid) => chip(uid, removeLabel, () => {
        store(chosen().filter((u) => u !== uid));
        ui.input.focus();
      })));
    }
    pickerList(ui, field, async (query) => {
      if (!query) return [];
      let results = [];
      try {
        const response = await fetch(field.dataset.pickerRemote + encodeURIComponent(query), {
          headers: { Accept: "application/json" },
          credentials: "same-origin",
        });
        if (response.ok) results = (await response.json()).results || [];
      } catch (error) {
        results = [];
      }
      return results.map((item) => {
        const content = item.content || {};
        const version = content.en || content.zh || {};
        const text = (version.context || version.prompt || version.question || "").slice(0, 80);
        const uids = chosen();
        return {
          label: item.uid,
          detail: text,
          selected: uids.includes(item.uid),
          choose: () => store(uids.includes(item.uid) ? uids.filter((u) => u !== item.uid) : [...uids, item.uid]),
        };
      });
    });
    paintChips();
  }

  function setupPickers(root) {
    root.querySelectorAll("select[data-picker]").forEach(setupSelectPicker);
    root.querySelectorAll("input[data-picker-remote]").forEach(setupRemotePicker);
  }
  document.addEventListener("htmx:load", (event) => setupPickers(event.target));

  // A form marked data-confirm asks before it is sent (closing, cancelling, freezing cannot be undone).
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (form && form.dataset && form.dataset.confirm && !window.confirm(form.dataset.confirm)) event.preventDefault();
  });

  // The item list's bulk actions: the header's box checks or clears every item box of the page.
  document.addEventListener("change", (event) => {
    const all = event.target.closest && event.target.closest("[data-check-all]");
    if (!all) return;
    document.querySelectorAll(`input[type=checkbox][name="${all.dataset.checkAll}"]`).forEach((box) => {
      box.checked = all.checked;
    });
  });

  // Phones: the navigation collapses behind the Menu button (app.css shows it only while the bar is open).
  function setupNavToggle(button) {
    const bar = button.closest(".topbar");
    function show(open) {
      bar.classList.toggle("nav-open", open);
      button.setAttribute("aria-expanded", open ? "true" : "false");
    }
    button.addEventListener("click", () => show(!bar.classList.contains("nav-open")));
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && bar.classList.contains("nav-open")) { show(false); button.focus(); }
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    const toggle = document.querySelector("[data-nav-toggle]");
    if (toggle) setupNavToggle(toggle);
    widths(document);
    setupPickers(document);
    const queue = queuePage();
    if (queue) setupQueueFlow(queue);
    const adjudication = document.getElementById("adjudication-form");
    if (adjudication) setupAdjudication(adjudication);
  });
})();
