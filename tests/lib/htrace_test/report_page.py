"""The HTML report's page as its script reads it: the embedded data block."""
import json


def html_data(path):
    """The report's data block (<script id="htrace-data">), parsed."""
    with open(path) as f:
        text = f.read()
    start = text.index('<script id="htrace-data" type="application/json">')
    start = text.index(">", start) + 1
    return json.loads(text[start:text.index("</script>", start)])
