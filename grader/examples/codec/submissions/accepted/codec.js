const [mode, data] = require("fs").readFileSync(0, "utf8").trim().split(/\s+/);
let out = "";
if (mode === "encode") {
  for (const c of data) out += String(c.charCodeAt(0) - 96).padStart(2, "0");
} else {
  for (let i = 0; i + 1 < data.length; i += 2)
    out += String.fromCharCode(96 + Number(data.slice(i, i + 2)));
}
console.log(out);
