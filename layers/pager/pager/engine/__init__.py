"""The engine every unit of work runs on, below the signals, the buttons, the commands and the sweep:

    effects   what a decision asks of the world, as data: a message sent, edited or deleted, a note kept for a
              call, a dispatch, a merge, a redelivery (`Step`: a decision's next step, with at most one effect)
    perform   the one place that carries an effect out (`perform`, which raises), and `attempt`, which returns
              what became of it (`Done`) for a unit that folds its results
    settle    a record's claim, act, record loop (`settle`), and a record held across a few steps (`holding`)
"""
