// scoperag ui: confirmations, ingest with live progress, uploads. Plain JavaScript, no build.
"use strict";

const csrf = () => document.querySelector('meta[name="csrf-token"]').content;

function pathInput(form) {
  return form.querySelector('input[name="path"], input[name="paths"]');
}

function confirmations() {
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }
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
    const response = await fetch(`/ui/jobs/${job}`, { headers: { Accept: "application/json" } });
    const state = await response.json();
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
    if (state.state === "failed") {
      show("ingest-error", state.error);
      return;
    }
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
      headers: { "X-CSRF-Token": csrf(), "Content-Type": "application/octet-stream" },
      body: file,
    });
    const answer = await response.json();
    if (!response.ok) return show("ingest-error", answer.error || answer.detail);
    pathInput(form).value = answer.path;
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    document.getElementById("ingest-error").hidden = true;
    document.getElementById("ingest-done").hidden = true;
    show("progress");
    const response = await fetch(form.action, { method: "POST", body: new FormData(form) });
    const answer = await response.json();
    if (!response.ok) return show("ingest-error", answer.error || answer.detail);
    await poll(answer.job.id);
  });
}

// Parts that take longer are asked for once the page is shown: the overview's check, and a
// listing tool's answer when its section is opened.
async function lazyParts() {
  const health = document.getElementById("health");
  if (health) {
    const response = await fetch(health.dataset.src);
    health.innerHTML = await response.text();
  }
  for (const details of document.querySelectorAll("details.lazy")) {
    details.addEventListener("toggle", async () => {
      if (!details.open || details.dataset.loaded) return;
      details.dataset.loaded = "1";
      const response = await fetch(details.dataset.src);
      details.querySelector("pre").textContent = JSON.stringify(await response.json(), null, 2);
    });
  }
}

document.addEventListener("DOMContentLoaded", () => {
  confirmations();
  ingest();
  lazyParts();
});
