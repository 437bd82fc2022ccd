"""hello: a WASDI app.  WASDI calls run() with the parameters of the run."""

import wasdi


def run():
    name = wasdi.getParameter("NAME", "world")
    wasdi.wasdiLog(f"Hello {name}")
    wasdi.updateProgressPerc(50)

    output = wasdi.getParameter("OUTPUT", "hello.txt")
    with open(wasdi.getPath(output), "w") as handle:
        handle.write(f"Hello {name}\n")
    wasdi.addFileToWASDI(output)

    wasdi.setPayload({"greeting": f"Hello {name}", "output": output})
    wasdi.updateStatus("DONE", 100)


if __name__ == "__main__":
    # Local runs read config.json and params.json (see the official library's documentation).
    wasdi.init("./config.json")
    run()
