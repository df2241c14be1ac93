"""gradeline as an Open OnDemand app (``app``): run by the portal as the logged-in user,
it reaches the course's desk and staff pages as that user; ``site/`` holds what is
installed into OnDemand's apps directory (``gradeline ondemand install``)."""
