// scoperag ui: ingest with live progress, uploads, the overview's check, the merge count.
// Plain JavaScript, no build; every change is confirmed by a button in the page itself.
"use strict";

const csrf = () => document.querySelector('meta[name="csrf-token"]').content;
const asJson = { Accept: "application/json" };

function pathInput(form) {
  return form.querySelector('input[name="path"], input[name="paths"]');
}

function show(id, text) {
  const element = document.getElementById(id);
  element.hidden = false;
  if (text !== undefined) element.textContent = text;
  return element;
}

async function poll(job) {
  const bar = document.getElementById("progress-bar");
  for (;;) {
    const response = await fetch(`/ui/jobs/${job}`, { headers: asJson });
    const state = await response.json();
    if (!response.ok) return show("ingest-error", state.error);
    if (state.total) {
      bar.max = state.total;
      bar.value = state.done;
    }
    const count = state.total ? `${state.done}/${state.total}` : `${state.done}`;
    show("progress-text", `${count} ${state.note || ""}`);
    if (state.state === "done") {
      show("ingest-result", JSON.stringify(state.result, null, 2));
      show("ingest-done");
      return;
    }
    if (state.state === "failed") return show("ingest-error", state.error);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function ingest() {
  const form = document.getElementById("ingest-form");
  if (!form) return;
  document.getElementById("use-sample").addEventListener("click", () => {
    pathInput(form).value = document.getElementById("sample-path").textContent;
  });
  document.getElementById("upload").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (!file) return;
    const response = await fetch(`/ui/upload?name=${encodeURIComponent(file.name)}`, {
      method: "POST",
      headers: { ...asJson, "X-CSRF-Token": csrf(), "Content-Type": "application/octet-stream" },
      body: file,
    });
    const answer = await response.json();
    if (!response.ok) return show("ingest-error", answer.error);
    pathInput(form).value = answer.path;
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    document.getElementById("ingest-error").hidden = true;
    document.getElementById("ingest-done").hidden = true;
    show("progress");
    const body = new FormData(form);
    const response = await fetch(form.action, { method: "POST", body, headers: asJson });
    const answer = await response.json();
    if (!response.ok) return show("ingest-error", answer.error);
    await poll(answer.job.id);
  });
}

// The overview's check reads every collection: asked for once the page is shown.
async function health() {
  const part = document.getElementById("health");
  if (!part) return;
  const response = await fetch(part.dataset.src);
  part.innerHTML = await response.text();
}

// A duplicate group's confirmation counts the members ticked.
function mergeCounts() {
  for (const form of document.querySelectorAll('form[action$="/merge"]')) {
    const count = form.querySelector(".merge-count");
    const update = () => {
      const n = form.querySelectorAll('input[name="content_hashes"]:checked').length;
      count.textContent = `${n} ${n === 1 ? "memory" : "memories"}`;
    };
    form.addEventListener("change", update);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  ingest();
  health();
  mergeCounts();
});
