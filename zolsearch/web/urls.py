"""The patient pages, mounted at the site root by ``zolsearch.urls``."""

from django.urls import path

from zolsearch.web import views

app_name = "web"
urlpatterns = [
    path("", views.search_page, name="search"),
    path("antwoord", views.answer_fragment, name="answer"),
    path("feedback", views.feedback_post, name="feedback"),
    path("toegankelijkheid", views.accessibility_statement, name="accessibility"),
]
