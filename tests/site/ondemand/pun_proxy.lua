-- What OnDemand's mod_ood_proxy does for /pun, reduced: the authenticated user (r.user,
-- from the site's login) names the per-user server, <OOD_PUN_SOCKET_ROOT>/<user>/
-- passenger.sock, and the request goes there unchanged (/pun/sys/APP/...), with
-- X-Forwarded-User set by the portal (whatever the client sent).
function pun_proxy_handler(r)
  local root = r.subprocess_env['OOD_PUN_SOCKET_ROOT']
  local user = r.user
  if not user or not user:match("^[%w@%.%-_]+$") then
    r.status = 404; r.content_type = "text/plain"; r:puts("failed to map user\n")
    return apache2.DONE
  end
  local sock = root .. "/" .. user .. "/passenger.sock"
  if not r:stat(sock) then  -- OnDemand would start the user's server here
    r.status = 503; r.content_type = "text/plain"
    r:puts("no per-user server running for " .. user .. "\n")
    return apache2.DONE
  end
  r.handler = "proxy:unix:" .. sock .. "|http://localhost"
  r.filename = r.unparsed_uri
  r.notes['proxy-nocanon'] = "1"  -- path and query passed on as the client sent them
  r.headers_in['X-Forwarded-Proto'] = r.is_https and "https" or "http"
  r.headers_in['X-Forwarded-User'] = user
  return apache2.DECLINED
end
