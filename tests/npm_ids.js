// Check barsym's --format actions ids against the npm minecraft-data package (tests/test_npm_ids.py).
// Reads {"1.19.2": {"items": [...], "blocks": [...], "entities": [...]}} on stdin and prints, as JSON,
// every id that version's npm data lacks: {"1.19.2": {"items": [], "blocks": [], "entities": []}}.
'use strict'
const path = require('path')
const mcData = require(path.resolve(process.argv[2]))
let input = ''
process.stdin.on('data', (chunk) => { input += chunk })
process.stdin.on('end', () => {
  const wanted = JSON.parse(input)
  const missing = {}
  for (const [version, kinds] of Object.entries(wanted)) {
    const data = mcData(version)
    if (!data) { missing[version] = { version: ['not in this minecraft-data'] }; continue }
    const tables = { items: data.itemsByName, blocks: data.blocksByName, entities: data.entitiesByName }
    missing[version] = {}
    for (const [kind, ids] of Object.entries(kinds)) {
      missing[version][kind] = ids.filter((id) => !(id in tables[kind]))
    }
  }
  process.stdout.write(JSON.stringify(missing))
})
