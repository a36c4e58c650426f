/* The patient search page, enhanced: the question goes to the JSON API (POST /api/v1/search),
   then the stored answer is fetched as the page renders it (GET /antwoord?trace_id=…, the same
   template as without JavaScript) into the aria-live region. The question stays out of the
   address bar and the page never reloads. Without this script the form is a plain GET that the
   server answers (zolsearch/web/views.py). Feedback goes to POST /api/v1/feedback. */
(function () {
  "use strict";

  var form = document.getElementById("search-form");
  var dataNode = document.getElementById("web-texts");
  if (!form || !dataNode || !window.fetch || !("content" in document.createElement("template"))) {
    return;
  }
  var texts = JSON.parse(dataNode.textContent);
  var input = document.getElementById("q");
  var result = document.getElementById("result");
  var status = document.getElementById("search-status");
  var button = form.querySelector("button[type=submit]");
  var busy = false;
  var json = { "Content-Type": "application/json", Accept: "application/json" };

  function showError(message) {
    var notice = document.getElementById("tpl-error").content.firstElementChild.cloneNode(true);
    notice.querySelector(".error-message").textContent = message;
    result.replaceChildren(notice);
  }

  function showAnswer(html) {
    // Markup from this site's own template (auto-escaped by Django), not from the API's text.
    var holder = document.createElement("template");
    holder.innerHTML = html;
    result.replaceChildren(holder.content);
  }

  function done() {
    status.textContent = "";
    busy = false;
    button.removeAttribute("aria-disabled");
    result.removeAttribute("aria-busy");
  }

  form.addEventListener("submit", function (event) {
    var question = input.value.trim();
    if (!question) {
      return; // the browser's "required" check, or the server, says what is missing
    }
    event.preventDefault();
    if (busy) {
      return;
    }
    busy = true;
    button.setAttribute("aria-disabled", "true");
    status.textContent = texts.searching;
    result.setAttribute("aria-busy", "true");
    result.replaceChildren();
    fetch(texts.api_search, { method: "POST", headers: json, body: JSON.stringify({ question: question }) })
      .then(function (response) {
        if (response.status === 422) {
          showError(texts.invalid);
          return null;
        }
        if (!response.ok) {
          throw new Error("search answered " + response.status);
        }
        return response.json().then(function (body) {
          return fetch(texts.answer_url + encodeURIComponent(body.trace_id)).then(function (page) {
            if (!page.ok) {
              throw new Error("answer page answered " + page.status);
            }
            return page.text().then(showAnswer);
          });
        });
      })
      .then(done)
      .catch(function () {
        // The server-side page runs the same search and says what went wrong, with a route to a person.
        form.submit();
      });
  });

  document.addEventListener("submit", function (event) {
    var feedback = event.target;
    if (!feedback.classList || !feedback.classList.contains("feedback")) {
      return;
    }
    event.preventDefault();
    var chosen = event.submitter;
    if (!chosen || chosen.name !== "helpful") {
      return;
    }
    var say = feedback.querySelector(".feedback-status");
    fetch(texts.api_feedback, {
      method: "POST",
      headers: json,
      body: JSON.stringify({
        trace_id: feedback.elements.trace_id.value,
        helpful: chosen.value === "yes",
        comment: feedback.elements.comment.value,
      }),
    })
      .then(function (response) {
        if (response.status === 201) {
          feedback.querySelectorAll('button[name="helpful"]').forEach(function (other) {
            other.setAttribute("aria-pressed", other === chosen ? "true" : "false");
          });
          say.textContent = texts.thanks;
        } else if (response.status === 429) {
          say.textContent = texts.too_many;
        } else {
          say.textContent = texts.feedback_failed;
        }
      })
      .catch(function () {
        say.textContent = texts.feedback_failed;
      });
  });
})();
