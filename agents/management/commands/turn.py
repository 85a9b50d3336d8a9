"""Start and finish turns without an agent runtime, to exercise the flow.

manage.py turn start WORKSPACE AGENT
manage.py turn finish TURN_ID succeeded|failed
manage.py turn show TURN_ID
"""

from django.core.management.base import BaseCommand, CommandError

from agents.models import Agent, Turn
from agents.services import turn_finish, turn_start
from pixie.core.errors import PixieError


class Command(BaseCommand):
    help = "Start, finish or show an agent's turn."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="verb", required=True)
        start = sub.add_parser("start")
        start.add_argument("workspace")
        start.add_argument("agent")
        finish = sub.add_parser("finish")
        finish.add_argument("turn", type=int)
        finish.add_argument("outcome", choices=["succeeded", "failed"])
        show = sub.add_parser("show")
        show.add_argument("turn", type=int)

    def handle(self, *args, verb, **options):
        try:
            if verb == "start":
                agent = Agent.objects.filter(
                    workspace__slug=options["workspace"], slug=options["agent"]
                ).first()
                if agent is None:
                    raise CommandError(
                        f"No agent {options['agent']!r} in workspace {options['workspace']!r}."
                    )
                turn = turn_start(agent=agent)
                self.stdout.write(f"Turn #{turn.pk} started for {agent.name}")
            else:
                turn = Turn.objects.filter(pk=options["turn"]).first()
                if turn is None:
                    raise CommandError(f"No turn #{options['turn']}.")
                if verb == "finish":
                    turn = turn_finish(turn=turn, outcome=options["outcome"])
                    self.stdout.write(f"Turn #{turn.pk} {turn.outcome}")
            self._show(turn)
        except PixieError as exc:
            raise CommandError(exc.message) from None

    def _show(self, turn):
        for turn_skill in turn.turn_skills.select_related("revision__skill", "override"):
            extra = f" (override r{turn_skill.override.number})" if turn_skill.override else ""
            self.stdout.write(
                f"  {turn_skill.position}. @{turn_skill.revision.skill.slug} "
                f"r{turn_skill.revision.number}{extra}"
            )
