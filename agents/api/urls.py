from django.urls import path

from agents.api import views as api

W = "workspaces/<slug:workspace>"
A = f"{W}/agents/<slug:agent>"

urlpatterns = [
    path(f"{W}/agents/", api.AgentList.as_view(), name="agent-list"),
    path(f"{A}/", api.AgentDetail.as_view(), name="agent-detail"),
    path(f"{A}/skills/", api.AgentSkills.as_view(), name="agent-skills"),
    path(f"{A}/skills/<slug:skill>/", api.AgentSkillDetail.as_view(), name="agent-skill-detail"),
    path(f"{A}/prompt/", api.AgentPrompt.as_view(), name="agent-prompt"),
    path(f"{A}/prompt/compare/", api.AgentPromptCompare.as_view(), name="agent-prompt-compare"),
    path(f"{A}/menu/", api.AgentMenu.as_view(), name="agent-menu"),
    path(f"{A}/turns/", api.AgentTurns.as_view(), name="agent-turns"),
    path(f"{A}/promote/", api.AgentPromote.as_view(), name="agent-promote"),
    path(f"{W}/turns/<int:pk>/", api.TurnDetail.as_view(), name="turn-detail"),
    path(f"{W}/turns/<int:pk>/finish/", api.TurnFinish.as_view(), name="turn-finish"),
    path(f"{W}/skills/<slug:slug>/stats/", api.SkillStats.as_view(), name="skill-stats"),
]
