"""gradeline's Open OnDemand app: Passenger's startup file (OnDemand runs it as the
logged-in user). The site's one configuration file sits beside it, or is named by
GRADELINE_ONDEMAND_CONFIG."""

from pathlib import Path

from grader.adapters.web.ondemand.app import application_from
from grader.settings import load

application = application_from(load().ondemand_config or
                               Path(__file__).with_name("gradeline-ondemand.yaml"))
