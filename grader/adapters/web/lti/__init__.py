"""gradeline as an LTI 1.3 tool: launches from an LMS (OIDC login, the platform's
signed id_token checked by PyLTI1p3), deep linking, grades back (Assignment and Grade
Services) and rosters from the LMS (Names and Role Provisioning Services)."""
